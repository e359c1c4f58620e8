-- sb_bet_place, twelfth version: the eleventh (leg verdicts, the price policy as the moves it
-- accepts, no bet before the email is verified, the punter's loss and wager limits, the play
-- session's time limit and reality check, the wallet's currency, every recorded bet on the bets
-- topic, the referral of a bet above the customer's stake limit, a trader's lower offer giving
-- part of a stake back, a resettlement's entries in the loss limit) opening a missing wallet in
-- the column's own default currency (the book's, reducers.rules.BOOK_CURRENCY, kept by the
-- model) instead of a currency written here.
-- Loaded by migration betting 0019.
CREATE OR REPLACE FUNCTION sb_bet_place(
    p_user_id integer,
    p_key text,
    p_fingerprint text,
    p_policy text,
    p_moves integer[],
    p_stake numeric,
    p_legs jsonb,
    p_max_return numeric,
    p_topic text,
    p_max_stake numeric,
    p_referral_s integer
) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := now();
    v_wallet_id bigint;
    v_balance numeric;
    v_excluded_until timestamptz;
    v_exclusion text;
    v_email_unverified boolean;
    v_bet_limits boolean;
    v_currency text;
    v_limit record;
    v_play record;
    v_used numeric;
    v_resets_at timestamptz;
    v_breach record;
    v_breach_resets_at timestamptz;
    v_breach_left numeric;
    v_breach_used boolean := false;
    v_existing record;
    v_leg record;
    v_price numeric;
    v_acceptable boolean;
    v_product numeric := 1;
    v_potential numeric;
    v_unavailable text := '';
    v_unavailable_message text := '';
    v_moved_seen numeric;
    v_moved_price numeric;
    v_delay integer := 0;
    v_code text := '';
    v_message text := '';
    v_status text;
    v_bet_id bigint;
    v_selections bigint[] := '{}';
    v_markets bigint[] := '{}';
    v_events bigint[] := '{}';
    v_prices numeric[] := '{}';
    v_seen numeric[] := '{}';
    v_answer_legs jsonb := '[]';
    v_event_legs text[] := '{}';
    v_stake numeric := round(p_stake, 2);
    v_odds numeric;
    v_accept_at timestamptz;
    v_type text;
    v_customer_limits boolean;
    v_sports bigint[] := '{}';
    v_factor numeric;
    v_sport_limit numeric;
    v_limit_stake numeric;
    v_referred boolean := false;
    v_reason text;
BEGIN
    -- Every change of a punter's money locks the wallet first, so bets, cash-outs and
    -- settlements of one punter queue up instead of deadlocking.
    SELECT id, balance INTO v_wallet_id, v_balance FROM odds_wallet WHERE user_id = p_user_id FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO odds_wallet (user_id, balance, created_at, updated_at)
        VALUES (p_user_id, 0, v_now, v_now)
        ON CONFLICT (user_id) DO NOTHING;
        SELECT id, balance INTO v_wallet_id, v_balance FROM odds_wallet WHERE user_id = p_user_id FOR UPDATE;
    END IF;

    SELECT id, request_fingerprint INTO v_existing
    FROM odds_bet WHERE user_id = p_user_id AND idempotency_key = p_key;
    IF FOUND THEN
        IF v_existing.request_fingerprint <> p_fingerprint THEN
            RETURN jsonb_build_object('outcome', 'key_reused');
        END IF;
        RETURN jsonb_build_object('outcome', 'existing', 'bet', sb_bet_json(v_existing.id));
    END IF;

    SELECT excluded_until, exclusion, email_unverified, bet_limits, currency, customer_limits
    INTO v_excluded_until, v_exclusion, v_email_unverified, v_bet_limits, v_currency, v_customer_limits
    FROM odds_wallet WHERE id = v_wallet_id;
    IF v_email_unverified THEN
        RETURN jsonb_build_object('outcome', 'email_unverified');
    END IF;
    IF v_excluded_until IS NOT NULL AND v_excluded_until > v_now THEN
        RETURN jsonb_build_object(
            'outcome', 'excluded', 'exclusion', v_exclusion,
            'until', (extract(epoch FROM v_excluded_until) * 1000000)::bigint
        );
    END IF;

    -- The play session (odds.betting.play.play_refusal): the answer carries the session's state
    -- and the statement's clock, from which the placement words the refusal.
    SELECT started_at, time_limit_s, reality_check_s, acknowledged_at INTO v_play
    FROM odds_playsession WHERE user_id = p_user_id AND ended_at IS NULL ORDER BY id DESC LIMIT 1;
    IF FOUND AND (
        (v_play.time_limit_s IS NOT NULL
         AND v_now >= v_play.started_at + make_interval(secs => v_play.time_limit_s))
        OR (v_play.reality_check_s IS NOT NULL
            AND v_now >= coalesce(v_play.acknowledged_at, v_play.started_at)
                         + make_interval(secs => v_play.reality_check_s))
    ) THEN
        RETURN jsonb_build_object(
            'outcome', 'play',
            'started_at', (extract(epoch FROM v_play.started_at) * 1000000)::bigint,
            'time_limit_s', v_play.time_limit_s,
            'reality_check_s', v_play.reality_check_s,
            'acknowledged_at', (extract(epoch FROM v_play.acknowledged_at) * 1000000)::bigint,
            'now', (extract(epoch FROM v_now) * 1000000)::bigint
        );
    END IF;

    -- Loss and wager limits (reducers.limits): the bet is taken only if, for every limit, what
    -- its rolling window has used plus the stake stays within it. Used: the stakes posted in the
    -- window, less (for a loss limit) what bets paid back into the wallet in it. One index range
    -- scan (ledger_wallet_time) per distinct period among the punter's limits.
    IF v_bet_limits THEN
        FOR v_limit IN
            WITH lim AS (
                SELECT l.kind, l.period,
                       -- A raise whose cooling-off has ended is the limit.
                       CASE WHEN l.pending_amount IS NOT NULL AND l.pending_from <= v_now
                            THEN l.pending_amount ELSE l.amount END AS amount,
                       -- reducers.limits.PERIOD_LENGTHS
                       CASE l.period WHEN 'day' THEN interval '1 day' WHEN 'week' THEN interval '7 days'
                            ELSE interval '30 days' END AS span
                FROM odds_walletlimit l
                WHERE l.wallet_id = v_wallet_id AND l.kind IN ('loss', 'wager')
            ), win AS (
                SELECT s.span,
                       coalesce(sum(e.amount) FILTER (WHERE e.kind = 'stake'), 0)
                       - coalesce(sum(e.amount) FILTER (WHERE e.kind = 'stake_return'), 0) AS staked,
                       coalesce(sum(e.amount) FILTER (WHERE e.kind IN ('payout', 'refund', 'cash_out')), 0)
                       + coalesce(sum(e.amount) FILTER (WHERE e.kind = 'resettle' AND e.credit = 'wallet'), 0)
                       - coalesce(sum(e.amount) FILTER (WHERE e.kind = 'resettle' AND e.debit = 'wallet'), 0)
                           AS returned,
                       min(e.created_at) FILTER (WHERE e.kind = 'stake') AS first_at
                FROM (SELECT DISTINCT span FROM lim) s
                LEFT JOIN odds_ledgerentry e
                    ON e.wallet_id = v_wallet_id AND e.created_at > v_now - s.span
                    AND e.kind IN ('stake', 'stake_return', 'payout', 'refund', 'cash_out', 'resettle')
                GROUP BY s.span
            )
            SELECT lim.kind, lim.period, lim.amount, lim.span, win.staked, win.returned, win.first_at
            FROM lim JOIN win USING (span)
            ORDER BY lim.kind, lim.span
        LOOP
            v_used := CASE WHEN v_limit.kind = 'loss' THEN v_limit.staked - v_limit.returned ELSE v_limit.staked END;
            CONTINUE WHEN v_used + v_stake <= v_limit.amount;
            -- When the window next frees room: its oldest stake leaves it. None when the stake is
            -- above the limit itself and never fits.
            v_resets_at := CASE WHEN v_stake <= v_limit.amount THEN v_limit.first_at + v_limit.span END;
            -- Several limits refusing: the one that frees room last is told (reducers.limits.breach_reported).
            IF NOT v_breach_used
                OR (v_breach_resets_at IS NOT NULL AND (v_resets_at IS NULL OR v_resets_at > v_breach_resets_at))
            THEN
                v_breach := v_limit;
                v_breach_resets_at := v_resets_at;
                v_breach_left := greatest(v_limit.amount - v_used, 0);
                v_breach_used := true;
            END IF;
        END LOOP;
        IF v_breach_used THEN
            RETURN jsonb_build_object(
                'outcome', 'over_limit', 'kind', v_breach.kind, 'period', v_breach.period,
                'amount', v_breach.amount::text, 'left', v_breach_left::text, 'currency', v_currency,
                'resets_at', (extract(epoch FROM v_breach_resets_at) * 1000000)::bigint
            );
        END IF;
    END IF;

    FOR v_leg IN
        SELECT l.ord - 1 AS position,
               (l.item ->> 'price_seen')::numeric AS price_seen,
               (l.item ->> 'price')::numeric AS live_price,
               coalesce(l.item ->> 'unavailable', '') AS live_reason,
               s.id AS selection_id, s.price AS catalogue_price, s.status AS selection_status, s.name,
               m.id AS market_id, m.status AS market_status, m.name AS market_name,
               e.id AS event_id, e.status AS event_status, e.home, e.away,
               sp.in_play_delay_s, sp.id AS sport_id,
               v.code AS verdict_code, v.message AS verdict_message
        FROM jsonb_array_elements(p_legs) WITH ORDINALITY AS l(item, ord)
        LEFT JOIN odds_selection s ON s.id = (l.item ->> 'selection_id')::bigint
        LEFT JOIN odds_market m ON m.id = s.market_id
        LEFT JOIN odds_event e ON e.id = m.event_id
        LEFT JOIN odds_competition c ON c.id = e.competition_id
        LEFT JOIN odds_sport sp ON sp.id = c.sport_id
        -- Whether the leg can be backed: reducers.betting.leg_verdict, every case of which the
        -- table holds (odds.betting.services.verdicts fills it from that function).
        LEFT JOIN betting_legverdict v
            ON v.event_status = e.status AND v.market_status = m.status AND v.selection_status = s.status
            AND v.live = coalesce(l.item ->> 'unavailable', '')
        ORDER BY l.ord
    LOOP
        IF v_leg.selection_id IS NULL THEN
            RETURN jsonb_build_object('outcome', 'unknown_selection', 'index', v_leg.position);
        END IF;
        IF v_leg.event_id = ANY (v_events) THEN
            RETURN jsonb_build_object('outcome', 'same_event');
        END IF;
        -- The live quote when the reducers' state (or a trader's newer decision) has one,
        -- the catalogue's price otherwise.
        v_price := coalesce(v_leg.live_price, v_leg.catalogue_price);
        v_product := v_product * v_price;
        IF v_leg.verdict_code IS NULL THEN
            RAISE EXCEPTION 'no leg verdict for event %, market %, selection % and live reason %',
                v_leg.event_status, v_leg.market_status, v_leg.selection_status, v_leg.live_reason;
        END IF;
        IF v_unavailable = '' AND v_leg.verdict_code <> '' THEN
            v_unavailable := v_leg.verdict_code;
            v_unavailable_message := v_leg.verdict_message;
        END IF;
        -- The punter's price policy, as the moves of the price it accepts (reducers.betting.PRICE_POLICY_MOVES).
        v_acceptable := sign(v_price - v_leg.price_seen)::integer = ANY (p_moves);
        IF v_moved_seen IS NULL AND NOT v_acceptable THEN
            v_moved_seen := v_leg.price_seen;
            v_moved_price := v_price;
        END IF;
        IF v_leg.event_status = 'in_play' THEN
            v_delay := greatest(v_delay, v_leg.in_play_delay_s);
        END IF;
        v_selections := v_selections || v_leg.selection_id;
        v_sports := v_sports || v_leg.sport_id;
        v_markets := v_markets || v_leg.market_id;
        v_events := v_events || v_leg.event_id;
        -- Rounded as the numeric(7, 2) columns round.
        v_prices := v_prices || round(v_price, 2);
        v_seen := v_seen || round(v_leg.price_seen, 2);
        v_answer_legs := v_answer_legs || jsonb_build_object(
            'selection_id', v_leg.selection_id, 'selection', v_leg.name,
            'market_id', v_leg.market_id, 'market', v_leg.market_name,
            'event_id', v_leg.event_id, 'home', v_leg.home, 'away', v_leg.away,
            'price', round(v_price, 2)::text, 'price_seen', round(v_leg.price_seen, 2)::text,
            'result', 'undecided', 'position', v_leg.position
        );
        v_event_legs := v_event_legs || ('{"selection_id":' || v_leg.selection_id || ',"market_id":' || v_leg.market_id
            || ',"event_id":' || v_leg.event_id || ',"price":"' || round(v_price, 2) || '"}');
    END LOOP;

    -- Stake times the product of the prices, rounded down to the penny (never overpay).
    v_potential := trunc(p_stake * v_product, 2);
    IF v_potential > p_max_return THEN
        RETURN jsonb_build_object('outcome', 'return_too_high', 'potential_return', v_potential::text);
    END IF;

    IF v_unavailable <> '' THEN
        v_code := v_unavailable;
        v_message := v_unavailable_message;
    ELSIF v_moved_seen IS NOT NULL THEN
        v_code := 'price_changed';
        v_message := format('the price moved from %s to %s', v_moved_seen, v_moved_price);
    ELSIF v_balance < p_stake THEN
        v_code := 'insufficient_funds';
        v_message := format('the balance %s is less than the stake %s', v_balance, p_stake);
    END IF;
    -- The customer's stake limit (reducers.trading.customer_stake_limit): the stake factor's share
    -- of the market's maximum, rounded down to the penny, and the limits of the bet's sports,
    -- whichever is smallest (least() passes over a missing one). Read only for a customer a
    -- trader has limited (the wallet's flag), and only for a bet that would be taken.
    IF v_code = '' AND v_customer_limits THEN
        SELECT stake_factor INTO v_factor FROM trading_customerlimit WHERE user_id = p_user_id;
        SELECT min(max_stake) INTO v_sport_limit
        FROM trading_customersportlimit WHERE user_id = p_user_id AND sport_id = ANY (v_sports);
        v_limit_stake := least(trunc(p_max_stake * v_factor, 2), v_sport_limit);
        v_referred := v_limit_stake IS NOT NULL AND v_stake > v_limit_stake;
    END IF;
    v_status := CASE WHEN v_code <> '' THEN 'rejected' WHEN v_referred OR v_delay > 0 THEN 'pending' ELSE 'accepted' END;
    -- Accumulator odds: the product of the prices to two places, half up.
    v_odds := round(v_product, 2);
    IF v_referred THEN
        v_accept_at := v_now + make_interval(secs => p_referral_s);
    ELSIF v_status = 'pending' THEN
        v_accept_at := v_now + make_interval(secs => v_delay);
    END IF;

    INSERT INTO odds_bet (
        user_id, idempotency_key, request_fingerprint, kind, status, price_policy, stake, odds,
        potential_return, payout, reject_code, reject_message, placed_at, accept_at, settled_at, referred_limit
    ) VALUES (
        p_user_id, p_key, p_fingerprint,
        CASE WHEN cardinality(v_selections) = 1 THEN 'single' ELSE 'accumulator' END,
        v_status, p_policy, v_stake, v_odds, v_potential, 0, v_code, v_message, v_now,
        v_accept_at,
        NULL,
        CASE WHEN v_referred THEN v_limit_stake END
    ) RETURNING id INTO v_bet_id;

    INSERT INTO odds_betleg (bet_id, selection_id, market_id, event_id, price, price_seen, result, position)
    SELECT v_bet_id, l.selection_id, l.market_id, l.event_id, l.price, l.price_seen, 'undecided', l.ord - 1
    FROM unnest(v_selections, v_markets, v_events, v_prices, v_seen)
        WITH ORDINALITY AS l(selection_id, market_id, event_id, price, price_seen, ord);

    IF v_status <> 'rejected' THEN
        UPDATE odds_wallet SET balance = balance - p_stake, updated_at = v_now
        WHERE id = v_wallet_id
        RETURNING balance INTO v_balance;
        INSERT INTO odds_ledgerentry (
            wallet_id, kind, debit, credit, amount, balance_after, bet_id, reference, created_at
        ) VALUES (v_wallet_id, 'stake', 'wallet', 'bets_held', p_stake, v_balance, v_bet_id, '', v_now);
    END IF;

    -- Every recorded bet goes on the bets topic, exactly as reducers.schemas.BetEvent encodes it
    -- (compact JSON, the same keys in the same order): ``placed`` adds to the books, ``pending``,
    -- ``referred`` and ``rejected`` are for the ticker. Every value is a number, a fixed word or,
    -- for the reason, a string JSON-escaped by to_jsonb. A referral's reason in the words of
    -- reducers.trading.referral_reason.
    v_type := CASE WHEN v_referred THEN 'referred' WHEN v_status = 'accepted' THEN 'placed' ELSE v_status END;
    v_reason := CASE WHEN v_referred
        THEN format('stake %s %s above the customer''s limit of %s %s', v_stake, v_currency, v_limit_stake, v_currency)
        ELSE v_message END;
    INSERT INTO odds_outboxmessage (topic, key, value, created_at, sent_at, attempts, last_error)
    VALUES (
        p_topic,
        convert_to(v_bet_id::text, 'UTF8'),
        convert_to(
            '{"v":1,"event_id":"' || v_bet_id || ':' || v_type || '","type":"' || v_type || '","bet_id":' || v_bet_id
            || ',"user_id":' || p_user_id || ',"stake":"' || v_stake
            || '","potential_return":"' || v_potential || '","legs":[' || array_to_string(v_event_legs, ',')
            || '],"ts":' || (extract(epoch FROM clock_timestamp()) * 1000)::bigint
            || ',"currency":"' || v_currency || '","reason":' || to_jsonb(v_reason)::text
            || ',"until":' || coalesce((floor(extract(epoch FROM v_accept_at) * 1000)::bigint)::text, 'null') || '}',
            'UTF8'
        ),
        v_now, NULL, 0, ''
    );

    -- The bet as sb_bet_json shows it, from what this call holds (the leg rows' ids left out).
    RETURN jsonb_build_object('outcome', 'created', 'bet', jsonb_build_object(
        'id', v_bet_id,
        'user_id', p_user_id,
        'idempotency_key', p_key,
        'request_fingerprint', p_fingerprint,
        'kind', CASE WHEN cardinality(v_selections) = 1 THEN 'single' ELSE 'accumulator' END,
        'status', v_status,
        'price_policy', p_policy,
        'stake', v_stake::text,
        'odds', v_odds::text,
        'potential_return', v_potential::text,
        'payout', '0.00',
        'reject_code', v_code,
        'reject_message', v_message,
        'placed_at', (extract(epoch FROM v_now) * 1000000)::bigint,
        'accept_at', (extract(epoch FROM v_accept_at) * 1000000)::bigint,
        'referred_limit', CASE WHEN v_referred THEN v_limit_stake::text END,
        'settled_at', NULL,
        'legs', v_answer_legs
    ));
END
$$;
