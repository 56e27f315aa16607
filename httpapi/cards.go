package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/ledger"
)

// createDisposableCard answers 201 with the card in an envelope, its full
// number and cvv in this answer only (an idempotent replay lacks them, see
// "Secrets at rest"). An invalid card (SPEC.md's rules) is 400 with the
// fields under details; past the hourly creation limit it is 429 with
// retry_after, limit_type, current_count and limit.
func (h *handler) createDisposableCard(x *exchange, r *http.Request) error {
	return h.createCard(x, r, h.cards.CreateDisposableCard)
}

// createVirtualCard is createDisposableCard for a virtual card.
func (h *handler) createVirtualCard(x *exchange, r *http.Request) error {
	return h.createCard(x, r, h.cards.CreateVirtualCard)
}

func (h *handler) createCard(x *exchange, r *http.Request,
	create func(context.Context, corebank.Caller, cards.NewCard) (*cards.Card, error)) error {
	return created(x, r, enveloped(http.StatusCreated, "card created"), func(q *cards.NewCard) *string { return &q.EntityID }, create)
}

func (h *handler) getCard(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "card retrieved"), h.cards.GetCard)
}

// freezeReq is the optional body of POST /cards/{id}/freeze: status
// "blocked" (default; unfreeze reverses it) or "fraud" (final).
type freezeReq struct {
	Status   string `json:"status"`
	EntityID string `json:"entity_id"`
}

func (h *handler) freezeCard(x *exchange, r *http.Request) error {
	var req freezeReq
	return moved(x, r, enveloped(http.StatusOK, "card frozen"), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*cards.Card, error) {
		return h.cards.FreezeCard(ctx, c, entity, id, req.Status)
	})
}

func (h *handler) unfreezeCard(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "card unfrozen"), &req, &req.EntityID, h.cards.UnfreezeCard)
}

type reassignReq struct {
	AccountID string `json:"account_id"`
	EntityID  string `json:"entity_id"`
}

func (h *handler) reassignCard(x *exchange, r *http.Request) error {
	var req reassignReq
	return moved(x, r, enveloped(http.StatusOK, "card reassigned"), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*cards.Card, error) {
		return h.cards.ReassignCard(ctx, c, entity, id, req.AccountID)
	})
}

func (h *handler) deleteCard(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "card deleted"), &req, &req.EntityID, h.cards.DeleteCard)
}

// cardsList is GET /cards's data: the page under cards.
type cardsList struct {
	Cards []cards.Card `json:"cards"`
	Meta  listMeta     `json:"meta"`
}

// listCards lists an entity's cards but deleted ones, oldest first, under
// data.cards (meta beside them, as data.items lists have it); account_id
// keeps one account's. next_cursor, which the document lists, is cursor.
func (h *handler) listCards(x *exchange, r *http.Request) error {
	return listed(x, r, listing[cards.Card]{name: "cards", message: "cards retrieved",
		filters: func(q *query, filters map[string]string) {
			q.cursorAlias("next_cursor")
			q.pick(filters, "account_id")
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[cards.Card], string, error) {
			p, err := h.cards.ListCards(ctx, c, cards.CardFilter{EntityID: l.entityID, AccountID: l.filters["account_id"]}, l.opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		},
		form: func(_ *corebank.Page[cards.Card], l *listResponse[cards.Card]) any {
			return &envelope[*cardsList]{Status: "success", Message: l.Message, Data: &cardsList{Cards: l.Data, Meta: l.Meta}}
		}})
}

// cardTransactions is GET /cards/{id}/transactions's data: the card's
// transactions, oldest first.
type cardTransactions struct {
	Transactions []cards.Transaction `json:"transactions"`
}

func (h *handler) listCardTransactions(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "card transactions retrieved"),
		func(ctx context.Context, c corebank.Caller, entity, id string) (*cardTransactions, error) {
			txs, err := h.cards.ListTransactions(ctx, c, cards.TransactionFilter{EntityID: entity, CardID: id})
			if err != nil {
				return nil, err
			}
			return &cardTransactions{Transactions: txs}, nil
		})
}

// authorizeCard is POST /sandbox/cards/{id}/authorizations (CONTRACT.md):
// a purchase decided by the card's state, controls and the account's
// available balance, answered 201 with the bare card transaction, pending
// or declined with decline_reason.
func (h *handler) authorizeCard(x *exchange, r *http.Request) error {
	var req cards.Authorization
	return moved(x, r, bare(http.StatusCreated), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*cards.Transaction, error) {
		return h.cards.AuthorizeCard(ctx, c, entity, id, req)
	})
}

// cardTxReq is the body of the sandbox card transaction moves: amount
// (optional but for increment) and entity_id.
type cardTxReq struct {
	Amount   int64  `json:"amount"`
	EntityID string `json:"entity_id"`
}

// cardTxMove answers a sandbox card transaction move (CONTRACT.md: clear,
// reverse, expire, increment, refund, each {amount?}) 200 with the bare
// card transaction.
func (h *handler) cardTxMove(x *exchange, r *http.Request,
	run func(ctx context.Context, c corebank.Caller, entityID, id string, amount int64) (*cards.Transaction, error)) error {
	var req cardTxReq
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*cards.Transaction, error) {
		return run(ctx, c, entity, id, req.Amount)
	})
}

func (h *handler) clearCardTx(x *exchange, r *http.Request) error {
	return h.cardTxMove(x, r, h.cards.ClearTransaction)
}
func (h *handler) reverseCardTx(x *exchange, r *http.Request) error {
	return h.cardTxMove(x, r, h.cards.ReverseTransaction)
}
func (h *handler) incrementCardTx(x *exchange, r *http.Request) error {
	return h.cardTxMove(x, r, h.cards.IncrementTransaction)
}
func (h *handler) refundCardTx(x *exchange, r *http.Request) error {
	return h.cardTxMove(x, r, h.cards.RefundTransaction)
}

// expireCardTx expires the authorization whatever amount says (it ends
// the whole hold), but refuses an amount the other moves refuse: the
// document declares one body for all five.
func (h *handler) expireCardTx(x *exchange, r *http.Request) error {
	return h.cardTxMove(x, r, func(ctx context.Context, c corebank.Caller, entityID, id string, amount int64) (*cards.Transaction, error) {
		if amount < 0 || amount > ledger.MaxAmount {
			return nil, corebank.InvalidField("amount", "must be between 0 and "+strconv.FormatInt(ledger.MaxAmount, 10))
		}
		return h.cards.ExpireTransaction(ctx, c, entityID, id)
	})
}
