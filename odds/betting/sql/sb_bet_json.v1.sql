-- sb_bet_json: a bet as the API shows it, amounts as decimal strings and times in epoch
-- microseconds. Loaded by migration odds 0005.
CREATE OR REPLACE FUNCTION sb_bet_json(p_bet_id bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', b.id,
        'user_id', b.user_id,
        'idempotency_key', b.idempotency_key,
        'request_fingerprint', b.request_fingerprint,
        'kind', b.kind,
        'status', b.status,
        'price_policy', b.price_policy,
        'stake', b.stake::text,
        'odds', b.odds::text,
        'potential_return', b.potential_return::text,
        'payout', b.payout::text,
        'reject_code', b.reject_code,
        'reject_message', b.reject_message,
        'placed_at', (extract(epoch FROM b.placed_at) * 1000000)::bigint,
        'accept_at', (extract(epoch FROM b.accept_at) * 1000000)::bigint,
        'settled_at', (extract(epoch FROM b.settled_at) * 1000000)::bigint,
        'legs', (
            SELECT jsonb_agg(
                jsonb_build_object(
                    'id', l.id,
                    'selection_id', l.selection_id,
                    'selection', s.name,
                    'market_id', l.market_id,
                    'market', m.name,
                    'event_id', l.event_id,
                    'home', e.home,
                    'away', e.away,
                    'price', l.price::text,
                    'price_seen', l.price_seen::text,
                    'result', l.result,
                    'position', l.position
                )
                ORDER BY l.position
            )
            FROM odds_betleg l
            JOIN odds_selection s ON s.id = l.selection_id
            JOIN odds_market m ON m.id = l.market_id
            JOIN odds_event e ON e.id = l.event_id
            WHERE l.bet_id = b.id
        )
    )
    FROM odds_bet b
    WHERE b.id = p_bet_id
$$;
