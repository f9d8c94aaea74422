package server

import (
	"context"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/indicators/formula"
)

// checkFormulaCost returns a 400 VALIDATION_ERROR naming param when the
// formula src costs more (see [formula.Expr.Cost]) than the feature
// formulaCost of the plan of the request's key allows: "formula: costs N,
// the plan allows M". A formula that does not parse gets its syntax error
// under param. It is the one check of every route that takes or evaluates
// a user's formula but alerts, whose service checks the same feature
// itself (see Server.newAlerts) because the dashboard creates alerts too.
func checkFormulaCost(ctx context.Context, param, src string) error {
	e, err := formula.Parse(src)
	if err != nil {
		return &tradekit.ParamError{Param: param, Msg: err.Error()}
	}
	if err := e.CheckCost(principal(ctx).Plan.Features.FormulaCost); err != nil {
		return &tradekit.ParamError{Param: param, Msg: err.Error()}
	}
	return nil
}
