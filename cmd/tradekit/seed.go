package main

import (
	"context"
	"fmt"
)

func (e *env) seed(ctx context.Context, args []string) error {
	fs, dsn := e.flags("seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	_ = dsn
	return fmt.Errorf("seed: not yet")
}
