package dashboard

import (
	"net/http"
	"net/url"

	"github.com/tradekit/tradekit"
)

// noticeCode names one of the notices a page shows after a redirect
// (post/redirect/get): the redirect carries ?notice=<code>, and the page
// shows the code's fixed text from [notices]. A page never shows text
// the URL carries, so a link made by someone else cannot put words on a
// signed-in page; an unknown code shows nothing.
type noticeCode string

// The notices.
const (
	noticeNone             noticeCode = ""
	noticeWatchlistCreated noticeCode = "watchlist-created"
	noticeWatchlistRenamed noticeCode = "watchlist-renamed"
	noticeWatchlistDeleted noticeCode = "watchlist-deleted"
	noticeAssetAdded       noticeCode = "asset-added"
	noticeAssetRemoved     noticeCode = "asset-removed"
	noticeAssetGone        noticeCode = "asset-gone"
	noticeAlertCreated     noticeCode = "alert-created"
	noticeAlertDeleted     noticeCode = "alert-deleted"
	noticeWebhookDeleted   noticeCode = "webhook-deleted"
	noticeSyncStarted      noticeCode = "sync-started"
	noticeDisconnected     noticeCode = "disconnected"
	noticePaperOnly        noticeCode = "paper-only"
	noticeFollowing        noticeCode = "following"
	noticeFollowSaved      noticeCode = "follow-saved"
	noticeUnfollowed       noticeCode = "unfollowed"
	noticeGuardrailsSaved  noticeCode = "guardrails-saved"
	noticeKeyDeleted       noticeCode = "key-deleted"
	noticeOrderCancelled   noticeCode = "order-cancelled"
	// A button's action refused, by the kind of its error.
	noticeNotFound  noticeCode = "not-found"
	noticeConflict  noticeCode = "conflict"
	noticeForbidden noticeCode = "forbidden"
	noticeInvalid   noticeCode = "invalid"
	noticeLimited   noticeCode = "rate-limited"
	noticeRejected  noticeCode = "rejected"
)

// notices are the texts of the notice codes.
var notices = map[noticeCode]string{
	noticeWatchlistCreated: "Created the watchlist. Add assets to it by their symbol.",
	noticeWatchlistRenamed: "Renamed the watchlist.",
	noticeWatchlistDeleted: "Deleted the watchlist.",
	noticeAssetAdded:       "Added the asset.",
	noticeAssetRemoved:     "Removed the asset.",
	noticeAssetGone:        "That asset is no longer in the watchlist.",
	noticeAlertCreated:     "Created the alert: it is checked on every new bar of its asset.",
	noticeAlertDeleted:     "Deleted the alert: it is no longer checked.",
	noticeWebhookDeleted:   "Deleted the webhook: nothing more is sent to it, and its delivery log stays readable.",
	noticeSyncStarted:      "The sync has started; reload the page to see its result.",
	noticeDisconnected:     "Disconnected. The portfolio and its history stay for your records.",
	noticePaperOnly:        "Only an active connection to the paper broker has an account page there.",
	noticeFollowing:        "Following. Set the copy controls and turn on auto-sync below to copy the leader's trades.",
	noticeFollowSaved:      "Saved the follow's settings.",
	noticeUnfollowed:       "Unfollowed: nothing more is copied from this leader.",
	noticeGuardrailsSaved:  "Saved your guardrails: they apply to every order from now on.",
	noticeKeyDeleted:       "Deleted the key: the API refuses it from now on.",
	noticeOrderCancelled:   "Cancelled the order.",
	noticeNotFound:         formKinds["NOT_FOUND"],
	noticeConflict:         formKinds["CONFLICT"],
	noticeForbidden:        formKinds["FORBIDDEN"],
	noticeInvalid:          formKinds["VALIDATION_ERROR"],
	noticeLimited:          "A limit of your plan is spent: try again later.",
	noticeRejected:         "The broker or your guardrails refused it.",
}

// refusedNotice returns the notice of a button's action refused with
// err, a user's doing (see [formErrors]).
func refusedNotice(err error) noticeCode {
	switch tradekit.Code(err) {
	case "NOT_FOUND":
		return noticeNotFound
	case "CONFLICT":
		return noticeConflict
	case "FORBIDDEN":
		return noticeForbidden
	case "RATE_LIMITED":
		return noticeLimited
	case "ORDER_REJECTED":
		return noticeRejected
	}
	return noticeInvalid
}

// withNotice returns path with the notice's code in its query; path has
// no query.
func withNotice(path string, n noticeCode) string {
	if n == noticeNone {
		return path
	}
	return path + "?notice=" + url.QueryEscape(string(n))
}

// back redirects a handled POST to a page (post/redirect/get), with a
// notice to show there.
func back(v visit, path string, n noticeCode) {
	http.Redirect(v.w, v.r, withNotice(path, n), http.StatusSeeOther)
}

// notice returns the text of the notice a redirect from [back] carries:
// the fixed text of its code, "" for no code or an unknown one.
func notice(r *http.Request) string {
	return notices[noticeCode(r.URL.Query().Get("notice"))]
}
