package dashboard

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/tradekit/tradekit"
)

// MaxFormBytes bounds the body of a form the dashboard reads. Its forms
// hold a few fields of at most a few hundred bytes each.
const MaxFormBytes = 64 << 10

// readForm parses the form of a POST into r.Form and r.PostForm: its query
// and its application/x-www-form-urlencoded body, read through an
// [http.MaxBytesReader] of [MaxFormBytes]. It never parses multipart: Go
// keeps large multipart parts in temporary files, and removes them only
// for the request its server created, not for the copies middleware makes
// ([http.Request.WithContext]), so a parse here would leave them on disk.
// Once r.PostForm is set, [http.Request.PostFormValue] reads it and never
// parses again.
//
// It answers the request and returns false when the body is not a form
// (415), is larger than MaxFormBytes (413) or cannot be read (400), and
// when a parameter's name or value, in the query or the form, holds a
// NUL character (400 naming the parameter): a NUL is never part of what
// a user typed, and the databases do not store it alike (PostgreSQL's
// text refuses it).
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
		return h.checkNUL(w, r.URL.Query())
	}
	if r.ContentLength != 0 && !isForm(r.Header.Get("Content-Type")) {
		h.refuse(w, http.StatusUnsupportedMediaType, "Unsupported form",
			"the form must be sent as application/x-www-form-urlencoded")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	err := r.ParseForm()
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		h.refuse(w, http.StatusRequestEntityTooLarge, "Form too large",
			"the form is larger than 64 KiB, the most the dashboard reads")
		return false
	case err != nil:
		h.refuse(w, http.StatusBadRequest, "Bad form", "the form could not be read")
		return false
	}
	return h.checkNUL(w, r.Form)
}

// checkNUL answers 400 naming the first parameter of form whose name or
// a value holds a NUL character, and returns false; true when none does.
func (h *Handler) checkNUL(w http.ResponseWriter, form url.Values) bool {
	for name, values := range form {
		bad := strings.IndexByte(name, 0) >= 0
		for _, v := range values {
			bad = bad || strings.IndexByte(v, 0) >= 0
		}
		if bad {
			h.refuse(w, http.StatusBadRequest, "Bad form",
				"the parameter "+tradekit.Quote(name)+" holds a NUL character (U+0000); remove it")
			return false
		}
	}
	return true
}

// isForm reports whether the Content-Type value ct is
// application/x-www-form-urlencoded, parameters aside.
func isForm(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// refuse answers a request the dashboard will not read with the error
// page: msg says why.
func (h *Handler) refuse(w http.ResponseWriter, status int, title, msg string) {
	h.render(w, status, "error", page{Title: title, Errors: map[string]string{"form": sentence(msg)}})
}
