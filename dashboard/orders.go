package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
)

// ordersPerPage is the orders page's size, the API's default page.
const ordersPerPage = 20

// orderStatuses are the orders page's filters besides all orders.
var orderStatuses = []brokers.OrderStatus{brokers.Pending, brokers.Filled, brokers.Cancelled, brokers.Rejected}

// ordersData is the orders page's.
type ordersData struct {
	Orders   []connect.Order
	Accounts map[uuid.UUID]string // the user's connections by id, as the page names them
	Status   brokers.OrderStatus  // the filter; "" for every order
	Statuses []brokers.OrderStatus
	Page     int
	Pages    int
	Total    int
	// PrevPath and NextPath are the pages before and after, "" for none.
	PrevPath, NextPath string
	// Query is the filter and page in a URL's query, for the cancel
	// buttons, which come back to the same list.
	Query string
	// ErrorOrder is the order whose cancellation the page's Errors are
	// about, and ErrorListed whether the page lists it: then the error
	// shows beside it, else at the top.
	ErrorOrder  uuid.UUID
	ErrorListed bool
}

// ordersQuery reads the orders page's filter and page from a request's
// URL: an unknown status means every order, and a page out of range the
// first.
func ordersQuery(r *http.Request) (brokers.OrderStatus, int) {
	q := r.URL.Query()
	status := brokers.OrderStatus(q.Get("status"))
	if !slices.Contains(orderStatuses, status) {
		status = ""
	}
	page := 1
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 && n <= 1000000 {
		page = n
	}
	return status, page
}

// ordersPath returns the orders page with the filter and page, and a
// notice when not empty.
func ordersPath(status brokers.OrderStatus, page int, notice noticeCode) string {
	return "/dashboard/orders" + ordersSearch(status, page, notice)
}

// ordersSearch returns the query of the orders page with the filter,
// page and notice, which are left out when "" or 1: "" or "?…".
func ordersSearch(status brokers.OrderStatus, page int, notice noticeCode) string {
	q := url.Values{}
	if status != "" {
		q.Set("status", string(status))
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if notice != "" {
		q.Set("notice", string(notice))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// ordersPage lists the user's orders, newest first, a page at a time.
func (h *Handler) ordersPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showOrders(v, http.StatusOK, page{Notice: notice(r)}, uuid.Nil)
	})
}

// showOrders renders the orders page the request's URL asks for; Errors
// in p are about the order errorOrder, if not uuid.Nil.
func (h *Handler) showOrders(v visit, status int, p page, errorOrder uuid.UUID) {
	ctx, st := v.r.Context(), h.cfg.Trading
	d := ordersData{Statuses: orderStatuses, Accounts: map[uuid.UUID]string{}, ErrorOrder: errorOrder}
	d.Status, d.Page = ordersQuery(v.r)
	var err error
	d.Orders, d.Total, err = st.Orders(ctx, v.u.ID, connect.OrderFilter{Status: d.Status, Page: d.Page, Limit: ordersPerPage})
	if err != nil {
		h.fail(v.w, err)
		return
	}
	d.Pages = max(1, (d.Total+ordersPerPage-1)/ordersPerPage)
	if d.Page > 1 {
		d.PrevPath = ordersPath(d.Status, d.Page-1, "")
	}
	if d.Page < d.Pages {
		d.NextPath = ordersPath(d.Status, d.Page+1, "")
	}
	d.Query = ordersSearch(d.Status, d.Page, "")
	conns, err := st.Connections(ctx, v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	for _, c := range conns {
		d.Accounts[c.ID] = c.Provider
		if c.AccountName != "" {
			d.Accounts[c.ID] += " " + c.AccountName
		}
	}
	d.ErrorListed = slices.ContainsFunc(d.Orders, func(o connect.Order) bool { return o.ID == errorOrder })
	p.Data = d
	h.show(v, status, "orders", "Orders", p)
}

// cancelOrder cancels a pending order at its broker, and returns to the
// same list with a notice; when the order cannot be cancelled (it filled
// meanwhile, or its connection ended) the list shows why beside it.
func (h *Handler) cancelOrder(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		_, err = h.cfg.Brokers.CancelOrder(r.Context(), v.u.ID, id)
		if errs, ok := formErrors(err); ok {
			h.showOrders(v, h.cfg.Status(err), page{Errors: errs}, id)
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		status, n := ordersQuery(r)
		http.Redirect(w, r, ordersPath(status, n, noticeOrderCancelled),
			http.StatusSeeOther)
	})
}
