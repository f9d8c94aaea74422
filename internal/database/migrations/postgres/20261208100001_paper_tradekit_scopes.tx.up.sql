-- The paper broker now enforces Alpaca's OAuth scopes (trading to place and
-- cancel orders, account:write for the account's settings and page), and
-- Tradekit asks for both. The grants and tokens Tradekit's own client
-- ("tradekit") holds from before, which asked for none, get the two, so
-- that connections made earlier keep trading.
UPDATE paper_grants SET scope = 'account:write trading' WHERE client_id = 'tradekit' AND scope = '';

--bun:split

UPDATE paper_tokens SET scope = 'account:write trading' WHERE client_id = 'tradekit' AND scope = '';
