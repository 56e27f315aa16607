package ledger

// eventDict is the dictionary the outbox compresses event records
// with (format eventS2): the field names and common values of the
// objects events carry (entities, accounts, inflows, transfers), the most
// frequent last. A transfer event of about 500 bytes of JSON is stored in
// about 200.
//
// Stored records depend on it byte for byte: never change it. A better
// dictionary is a new format byte, with this one kept for the records
// already written.
const eventDict = `"entity":{"id":"","type":"business","individual","name":"","is_root":false,` +
	`"parent_entity":null,"person_id":null,"business_id":"","user_id":null,"creation_context":"api",` +
	`"risk_level":"medium","meta":{},"person":null,"address":null,"identification":null,` +
	`"business":{"legal_name":"","trade_name":"","email":"","phonenumber":"","registration_number":"",` +
	`"industry":"","website":"","description":"","incorporation_meta":null,"operating_address":null,` +
	`"business_meta":{"business_officers":[]}` +
	`{"id":"","entity_id":"","type":"checking","currency":"USD","display_name":"Main USD",` +
	`"service_ban":"","balance":{"available":0,"current":0},"balance_id":"bal_",` +
	`"configuration":{"allow_inflows":true,"allow_outflows":true,"overdraft":false},` +
	`"stablecoin_balance":{},"maintenance_fee_exempt":false,"internal_metadata":{},"meta":{},` +
	`"is_default":false,"deleted":0,` +
	`accounts.createdaccounts.updatedoutflows.createdoutflows.failed"failed""cancelled""refunded"` +
	`{"id":"","type":"inflow","account_id":"","entity_id":"","account_details_id":null,"amount":1,` +
	`"currency":"USD","narration":"","reference":"","source":"bank","status":"completed",` +
	`"settles_at":null,"completed_at":1` +
	`outflows.completedinflows.completed{"id":"","account_id":"","entity_id":"","counterparty_id":"",` +
	`"payment_detail_id":"","type":"outflow","currency":"USD","amount":1,"applicable_fee":0,` +
	`"status":"pending","status_reason":"awaiting_processing","payment_type":"bank-transfer",` +
	`"payment_type":"book-transfer","narration":"","unique_reference":"","meta":{},` +
	`"status":"successful","status_reason":"","created":17,"updated":17`
