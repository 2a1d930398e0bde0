/**
 * The tables and procedures of the MySQL store, as one list of statements: the
 * store runs them on first use, and `affiliate-webhooks sql schema --mysql`
 * prints them (with the `DELIMITER` lines the mysql client needs) for teams that
 * run their own migrations.
 *
 * Tables (`p` = tablePrefix, default `aw_`), layout 3:
 *   p_conversions  conversion_id -> watermark, event_id   the newest order handled and
 *                                                         its event: a conversion
 *                                                         event's handled mark, and
 *                                                         (its row lock) the
 *                                                         conversion's lock
 *                  claim_token, prev_*                    the claim's marker and what
 *                                                         the row held before it
 *   p_events       event_id -> expires_at    events without a conversion (webhook.test)
 *                  claim_token               and events judged stale
 *   p_streak       name -> failures, codes    answers in a row that were not 2xx
 *   p_schema       version                   which layout these tables have
 *
 * Times are milliseconds since the epoch (UTC) on the server's clock, so every
 * process agrees on what has expired. No named locks: the claim writes its row
 * (the raised watermark, or the event's row) inside the delivery's
 * transaction, InnoDB's row lock on it is the lock, and it goes with the
 * transaction or the connection. The claim ends with a savepoint (`p_claim`):
 * a transaction's savepoints end with it, so the commit finds that savepoint
 * only while the transaction is still the one the claim began.
 *
 * The claim also writes a marker (`claim_token`, the claim's own token) into
 * its row, and only the store's commit clears it, in the same transaction. A
 * crash rolls an uncommitted claim back, marker and all, so a committed row
 * with a marker can only come from a commit the store did not send (a COMMIT
 * in a procedure or a compound statement, an implicit commit): that event is
 * held (answered `held`, never `duplicate` or `stale`, with every newer event
 * of its conversion) until resolved. While the handler runs the session's
 * transactions are READ ONLY except the claim's own (`START TRANSACTION READ
 * WRITE`): a statement after such a commit cannot write, so what was kept is
 * exactly what came before it.
 */
import { checkSqlIdentifier } from '@affiliate-webhooks/core/internal'

/** The layout these procedures expect; tables of another version are refused. */
export const MYSQL_SCHEMA_VERSION = 3

/** Where the store's tables live. */
export interface MysqlSchemaOptions {
  /** Prefix of every table and procedure name. Default `aw_`. */
  tablePrefix?: string | undefined
}

/** Table and procedure names, checked once. */
export interface SchemaNames {
  prefix: string
  events: string
  conversions: string
  streak: string
  version: string
  claim: string
  settle: string
  commit: string
  release: string
  recordAnswer: string
  /** The savepoint the claim sets and the commit releases: the claim's transaction's mark. */
  savepoint: string
}

export function schemaNames(options: MysqlSchemaOptions, caller: string): SchemaNames {
  const prefix = checkSqlIdentifier(caller, 'tablePrefix', options.tablePrefix ?? 'aw_')
  const name = (suffix: string) => `\`${prefix}${suffix}\``
  // Procedures carry the layout version, and a revision when their contract
  // changes: a newer store creates its own beside the older ones, and each
  // process only ever calls its own.
  const procedure = (suffix: string, revision = 1) =>
    name(`${suffix}_v${MYSQL_SCHEMA_VERSION}${revision === 1 ? '' : `r${revision}`}`)
  return {
    prefix,
    events: name('events'),
    conversions: name('conversions'),
    streak: name('streak'),
    version: name('schema'),
    claim: procedure('claim'),
    settle: procedure('settle'),
    commit: procedure('commit'),
    release: procedure('release'),
    recordAnswer: procedure('record_answer'),
    savepoint: name('claim'),
  }
}

/** Now, in milliseconds since the epoch, whatever the session's time zone. */
export const NOW_MS =
  "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"

/**
 * The columns each table of this layout has, by name suffix: a table that exists
 * without them was made by something else (an older version, another tool) and
 * is refused rather than used.
 */
export const TABLE_COLUMNS = {
  events: ['event_id', 'expires_at', 'claim_token'],
  conversions: [
    'conversion_id',
    'watermark',
    'event_id',
    'expires_at',
    'claim_token',
    'prev_watermark',
    'prev_event_id',
    'prev_expires_at',
  ],
  streak: ['name', 'failures', 'codes', 'expires_at'],
} as const

/** The version table alone: read first, so tables of another version are never touched. */
export const versionTableSql = (n: SchemaNames) =>
  `CREATE TABLE IF NOT EXISTS ${n.version} (
  version INT NOT NULL PRIMARY KEY
) ENGINE=InnoDB`

/** The version row, added once. */
export const versionRowSql = (n: SchemaNames) =>
  `INSERT IGNORE INTO ${n.version} (version) VALUES (${MYSQL_SCHEMA_VERSION})`

/** Layout 3's columns of the events table beyond layout 2's: the claim's marker. */
export const EVENTS_MARKER_COLUMNS = 'claim_token VARBINARY(36) NULL'

/**
 * Layout 3's columns of the conversions table beyond layout 2's: the claim's
 * marker, and the row as it was before the claim (NULL watermark: there was
 * none), so that a held event can be run again.
 */
export const CONVERSIONS_MARKER_COLUMNS = [
  'claim_token VARBINARY(36) NULL',
  'prev_watermark BIGINT NULL',
  'prev_event_id VARBINARY(255) NULL',
  'prev_expires_at BIGINT NULL',
]

function tablesSql(n: SchemaNames): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${n.events} (
  event_id VARBINARY(255) NOT NULL PRIMARY KEY,
  expires_at BIGINT NULL,
  ${EVENTS_MARKER_COLUMNS},
  KEY ${n.prefix}events_expires (expires_at)
) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${n.conversions} (
  conversion_id BIGINT NOT NULL PRIMARY KEY,
  watermark BIGINT NOT NULL,
  event_id VARBINARY(255) NOT NULL,
  expires_at BIGINT NOT NULL,
  ${CONVERSIONS_MARKER_COLUMNS.join(',\n  ')},
  KEY ${n.prefix}conversions_expires (expires_at)
) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${n.streak} (
  name VARCHAR(32) NOT NULL PRIMARY KEY,
  failures INT NOT NULL,
  codes VARCHAR(1024) NOT NULL,
  expires_at BIGINT NOT NULL
) ENGINE=InnoDB`,
  ]
}

/** Restores the session's own innodb_lock_wait_timeout after the claim's bounded write. */
const RESTORE_LOCK_WAIT =
  'SESSION innodb_lock_wait_timeout = COALESCE(@aw_lock_wait, @@GLOBAL.innodb_lock_wait_timeout)'

/**
 * The claim's insert, when its read found no row. A row another transaction
 * inserts meanwhile is waited for (bounded), then found as a duplicate. Either
 * that or an insert that may have waited on an insert that rolled back (which
 * leaves the waiter a gap lock) starts a fresh transaction.
 */
const insertNewRow = (n: SchemaNames) => `  IF v_expires IS NULL THEN
    -- No row at the read: insert it. A row another transaction inserts
    -- meanwhile is waited for (bounded), then found here as a duplicate.
    insert_row: LOOP
      SET v_started = SYSDATE(6);
      IF p_conversion IS NULL THEN
        INSERT IGNORE INTO ${n.events} (event_id, expires_at, claim_token)
          VALUES (p_event, v_until, p_token);
      ELSE
        INSERT IGNORE INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at, claim_token)
          VALUES (p_conversion, p_order, p_event, v_until, p_token);
      END IF;
      SET v_claimed = ROW_COUNT();
      IF v_claimed = 0 OR (v_retries < 3 AND TIMESTAMPDIFF(MICROSECOND, v_started, SYSDATE(6)) >= 2000) THEN
        -- A duplicate: another transaction inserted it first, and this one
        -- holds a shared lock on it now; upgrading that lock would deadlock
        -- with a third such event. Or (the insert took 2 ms or more) it may
        -- have waited for an insert that rolled back, and InnoDB then hands
        -- the waiter a lock on the gap beside the key, held to the end of the
        -- transaction: new conversions landing there would wait for this
        -- handler. Either way: let go, and start again in a fresh transaction.
        ROLLBACK;
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        START TRANSACTION READ WRITE;
        SET v_retries = v_retries + 1;
        IF v_claimed = 1 THEN
          SET v_claimed = 0;
          ITERATE insert_row;
        END IF;
      END IF;
      LEAVE insert_row;
    END LOOP;
  END IF;`

/**
 * Claimed: the session's wait_timeout becomes the lease (the server ends a
 * session idle past it, rolling back), session state changes are flagged in
 * each OK packet (so the store sees a handler's SET and does not hand the
 * session on), the session's next transactions are read only (the claim's
 * is READ WRITE), autocommit goes off when asked
 * (`p_autocommit_off`: so a statement after InnoDB rolled the transaction back
 * under the handler, a deadlock, opens a new transaction that the commit's
 * check rolls back, instead of committing on its own), the claim's savepoint
 * marks the transaction, and the procedure returns with it open. Turning
 * autocommit off inside a transaction commits nothing; commit and release
 * restore it.
 */
const claimedSql = (n: SchemaNames, indent = '    ') =>
  [
    'SET SESSION wait_timeout = p_lease_s, SESSION autocommit = IF(p_autocommit_off, 0, @@SESSION.autocommit);',
    // Every transaction after this one is read only until commit or release
    // put it back: what a commit the store did not send leaves open cannot write.
    'SET SESSION TRANSACTION READ ONLY;',
    `SAVEPOINT ${n.savepoint};`,
    // Last: the claim's own changes are not reported back in its OK packet.
    'SET SESSION session_track_state_change = 1;',
    'LEAVE body;',
  ].join(`\n${indent}`)

/** The transaction of the claim, READ COMMITTED, begun after whatever the session had open; lines indented by `indent`. */
const claimTransaction = (indent: string) =>
  [
    'COMMIT;',
    'SET TRANSACTION ISOLATION LEVEL READ COMMITTED;',
    'START TRANSACTION READ WRITE;',
  ].join(`\n${indent}`)

/**
 * MariaDB only (in a \`/*M! ... *\/\` comment, which MySQL skips): the common
 * case in one upsert. A conversion event takes its row without waiting
 * (innodb_lock_wait_timeout 0 for the statement): it inserts the row of a new
 * conversion, or raises the watermark of one whose row no live transaction
 * holds. Which of the two, or neither, is told by LAST_INSERT_ID (0 inserted,
 * 1 raised, 2 not raised), set in the upsert itself: ROW_COUNT() cannot tell
 * an insert from an unchanged row when the client asks for found rows, as
 * mysql2 does. Neither (a settled event, or a row held by another
 * transaction: 1205 at once; a held row, whose committed marker it may not
 * take): roll back, and decide as below, with the consistent read first and
 * the bounded wait.
 */
const fastClaimSql = (n: SchemaNames) => `  /*M!
  IF p_conversion IS NOT NULL THEN
    ${claimTransaction('    ')}
    BEGIN
      DECLARE CONTINUE HANDLER FOR 1205 SET v_claimed = -1;
      SET v_claimed = LAST_INSERT_ID(0);
      SET STATEMENT innodb_lock_wait_timeout = 0 FOR
        INSERT INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at, claim_token)
          VALUES (p_conversion, p_order, p_event, v_until, p_token)
          ON DUPLICATE KEY UPDATE
            prev_watermark = IF(LAST_INSERT_ID(IF(claim_token IS NULL AND (watermark < p_order OR expires_at <= v_now), 1, 2)) = 1, watermark, prev_watermark),
            prev_event_id = IF(LAST_INSERT_ID() = 1, event_id, prev_event_id),
            prev_expires_at = IF(LAST_INSERT_ID() = 1, expires_at, prev_expires_at),
            watermark = IF(LAST_INSERT_ID() = 1, p_order, watermark),
            event_id = IF(LAST_INSERT_ID() = 1, p_event, event_id),
            expires_at = IF(LAST_INSERT_ID() = 1, v_until, expires_at),
            claim_token = IF(LAST_INSERT_ID() = 1, p_token, claim_token);
    END;
    IF v_claimed = 0 AND LAST_INSERT_ID() < 2 THEN
      ${claimedSql(n, '      ')}
    END IF;
    ROLLBACK;
    SET v_claimed = 0;
  END IF;
  */`

/**
 * claim(event, conversion, order, leaseSeconds, waitSeconds, dedupeMs,
 * orderingMs, autocommitOff, token). Claimed, it answers nothing (no result set: the common case
 * costs the least): the transaction is open with the claim's row written and
 * locked and the claim's savepoint set, and the session's wait_timeout is the
 * lease (the server ends a session idle past it, rolling back). Otherwise one row (verdict):
 * `duplicate` or `stale` (marked, committed), `in_progress` (the row stayed
 * locked by another live transaction for waitSeconds, or a deadlock of racing
 * first events; rolled back), or `held` with `held_event` (the row carries a
 * committed marker: an escaped claim of that event; rolled back). The claim
 * writes `p_token` as its row's marker.
 *
 * On MariaDB a conversion event first tries the one upsert that does not
 * wait (above). Otherwise the first read is a consistent read outside the
 * claim's transaction (autocommit; or, without it, a transaction the COMMIT
 * before the claim's ends). The claim's transaction is READ COMMITTED (no snapshot older than the
 * row's lock for the handler, no gap locks), and every decision after a wait
 * is made by a locking statement, which reads the newest committed row.
 */
function claimSql(n: SchemaNames): string {
  const until = 'v_now + IF(p_conversion IS NULL, p_dedupe_ms, p_ordering_ms)'
  // Updates the existing row only if this event may take it: the watermark is
  // below its order, or expired, and no held claim's marker is on it. Such an
  // update always changes the row, so ROW_COUNT() is 1 exactly when it
  // claimed, whatever the client's FOUND_ROWS flag.
  const raise = `UPDATE ${n.conversions} SET prev_watermark = watermark, prev_event_id = event_id,
        prev_expires_at = expires_at, watermark = p_order, event_id = p_event,
        expires_at = v_until, claim_token = p_token
      WHERE conversion_id = p_conversion AND claim_token IS NULL
        AND (watermark < p_order OR expires_at <= v_now)`
  const retake = `UPDATE ${n.events} SET expires_at = v_until, claim_token = p_token
      WHERE event_id = p_event AND claim_token IS NULL AND (expires_at IS NULL OR expires_at <= v_now)`
  return `CREATE PROCEDURE IF NOT EXISTS ${n.claim}(
  IN p_event VARBINARY(255), IN p_conversion BIGINT, IN p_order BIGINT,
  IN p_lease_s INT, IN p_wait_s INT, IN p_dedupe_ms BIGINT, IN p_ordering_ms BIGINT,
  IN p_autocommit_off TINYINT, IN p_token VARBINARY(36))
body: BEGIN
  DECLARE v_now BIGINT DEFAULT ${NOW_MS};
  DECLARE v_until BIGINT;
  DECLARE v_mark BIGINT DEFAULT NULL;
  DECLARE v_event VARBINARY(255) DEFAULT NULL;
  DECLARE v_expires BIGINT DEFAULT NULL;
  DECLARE v_held VARBINARY(36) DEFAULT NULL;
  DECLARE v_claimed INT DEFAULT 0;
  DECLARE v_retries INT DEFAULT 0;
  DECLARE v_started DATETIME(6);
  DECLARE EXIT HANDLER FOR 1205, 1213
  BEGIN
    ROLLBACK;
    SET ${RESTORE_LOCK_WAIT};
    SELECT 'in_progress' AS verdict;
  END;
  SET v_until = ${until};
  -- A session a delivery left read only (its release failed) still claims.
  SET SESSION TRANSACTION READ WRITE;
${fastClaimSql(n)}
  -- The committed state, without a lock: a settled event is answered at once,
  -- even while a newer event of its conversion holds the row; a committed
  -- marker (a claim whose mark a commit of its handler's made durable) holds
  -- the event, and every event of its conversion.
  IF p_conversion IS NULL THEN
    SELECT MAX(expires_at), MAX(claim_token) INTO v_expires, v_held
      FROM ${n.events} WHERE event_id = p_event;
    IF v_held IS NOT NULL THEN
      ${heldVerdict('p_event')}
    END IF;
    IF v_expires > v_now THEN
      COMMIT;
      SELECT 'duplicate' AS verdict;
      LEAVE body;
    END IF;
  ELSE
    SELECT MAX(watermark), MAX(event_id), MAX(expires_at), MAX(claim_token)
      INTO v_mark, v_event, v_expires, v_held
      FROM ${n.conversions} WHERE conversion_id = p_conversion;
    IF v_held IS NOT NULL THEN
      ${heldVerdict('v_event')}
    END IF;
    IF v_expires > v_now AND v_mark >= p_order THEN
      CALL ${n.settle}(p_event, v_event, p_dedupe_ms);
      LEAVE body;
    END IF;
  END IF;
  -- READ COMMITTED, as the Postgres store's: no gap locks, so a claim that
  -- inserted a new conversion after waiting for another never holds the gap
  -- beside it (which would stall every new conversion landing there), and each
  -- of the handler's reads sees the newest commits. (The COMMIT ends the
  -- read's transaction on a session without autocommit.)
  ${claimTransaction('  ')}
  -- InnoDB waits for a row lock in whole seconds: lockWaitMs rounded up.
  SET @aw_lock_wait = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = p_wait_s;
${insertNewRow(n)}
  IF v_claimed = 0 THEN
    IF p_conversion IS NULL THEN
      ${retake};
    ELSE
      ${raise};
    END IF;
    SET v_claimed = ROW_COUNT();
  END IF;
  SET ${RESTORE_LOCK_WAIT};
  IF v_claimed = 1 THEN
    ${claimedSql(n)}
  END IF;
${notOursSql(n)}
  CALL ${n.settle}(p_event, v_event, p_dedupe_ms);
END`
}

/**
 * The claim's write did not take the row: the newest committed version
 * decides (a locking read returns that version, not the snapshot), and a
 * marker committed meanwhile holds the event. Ends by settling it (below).
 */
const notOursSql = (
  n: SchemaNames,
) => `  -- Not ours: the newest committed version decided (a locking read returns
  -- that version, not the snapshot); a marker committed meanwhile holds it.
  IF p_conversion IS NULL THEN
    SELECT MAX(claim_token) INTO v_held FROM ${n.events} WHERE event_id = p_event;
    IF v_held IS NOT NULL THEN
      ${heldVerdict('p_event')}
    END IF;
    ROLLBACK;
    SELECT 'duplicate' AS verdict;
    LEAVE body;
  END IF;
  SET v_mark = NULL;
  SELECT watermark, event_id, claim_token INTO v_mark, v_event, v_held FROM ${n.conversions}
    WHERE conversion_id = p_conversion FOR UPDATE;
  IF v_held IS NOT NULL THEN
    ${heldVerdict('v_event')}
  END IF;
  IF v_mark IS NULL THEN
    -- Pruned between the read and the update (it had expired): the gap is
    -- locked by this transaction now, so the row is this event's to insert.
    INSERT INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at, claim_token)
      VALUES (p_conversion, p_order, p_event, v_until, p_token);
    ${claimedSql(n)}
  END IF;`

/** The `held` verdict: the held event's id, nothing written (the transaction rolled back). */
const heldVerdict = (event: string) =>
  ['ROLLBACK;', `SELECT 'held' AS verdict, ${event} AS held_event;`, 'LEAVE body;'].join('\n      ')

/**
 * settle(event, watermark's event, dedupeMs) -> one row (verdict) for a
 * conversion event at or below the committed watermark: its own event is a
 * `duplicate`; another is `stale`, and marked in the events table so that its
 * retry is a duplicate too. Commits (ending the claim's transaction, if any).
 */
function settleSql(n: SchemaNames): string {
  return `CREATE PROCEDURE IF NOT EXISTS ${n.settle}(
  IN p_event VARBINARY(255), IN p_mark_event VARBINARY(255), IN p_dedupe_ms BIGINT)
body: BEGIN
  DECLARE v_done INT DEFAULT 0;
  DECLARE v_until BIGINT DEFAULT ${NOW_MS} + p_dedupe_ms;
  IF p_event = p_mark_event THEN
    COMMIT;
    SELECT 'duplicate' AS verdict;
    LEAVE body;
  END IF;
  SELECT COUNT(*) INTO v_done FROM ${n.events} WHERE event_id = p_event AND expires_at > ${NOW_MS};
  IF v_done > 0 THEN
    COMMIT;
    SELECT 'duplicate' AS verdict;
    LEAVE body;
  END IF;
  INSERT INTO ${n.events} (event_id, expires_at) VALUES (p_event, v_until)
    ON DUPLICATE KEY UPDATE expires_at = v_until;
  COMMIT;
  SELECT 'stale' AS verdict;
END`
}

/**
 * commit(event, conversion, token). Committed, it answers nothing; otherwise
 * one row (committed = 0), and commits nothing: the claim's savepoint is gone
 * (the transaction the claim began was ended under the handler: its own
 * COMMIT or ROLLBACK, a deadlock), or the transaction is a read-only one
 * (1792: the claim's READ WRITE one ended, and the session's next began), or
 * the row does not carry this claim's marker uncommitted (a handler that
 * recreated the savepoint after ending the claim's transaction). Clearing the
 * marker is the store's own last word: only this commit makes a claim's mark
 * durable without leaving the event held.
 */
function commitSql(n: SchemaNames): string {
  const refuse = `ROLLBACK;
    ${RESTORE_SESSION};
    SELECT 0 AS committed;`
  // 1305: "SAVEPOINT ... does not exist" (the same number as a missing
  // procedure, and the body calls none); 1792: a read-only transaction.
  return `CREATE PROCEDURE IF NOT EXISTS ${n.commit}(
  IN p_event VARBINARY(255), IN p_conversion BIGINT, IN p_token VARBINARY(36))
body: BEGIN
  DECLARE EXIT HANDLER FOR 1305, 1792
  BEGIN
    ${refuse}
  END;
  RELEASE SAVEPOINT ${n.savepoint};
  IF p_conversion IS NULL THEN
    UPDATE ${n.events} SET claim_token = NULL WHERE event_id = p_event AND claim_token = p_token;
  ELSE
    UPDATE ${n.conversions} SET claim_token = NULL
      WHERE conversion_id = p_conversion AND claim_token = p_token;
  END IF;
  IF ROW_COUNT() <> 1 THEN
    ${refuse}
    LEAVE body;
  END IF;
  COMMIT;
  ${RESTORE_SESSION};
END`
}

/**
 * What the claim changed in the session, put back for the pool (after the
 * transaction ended: turning autocommit on would commit an open one), from
 * the server's defaults rather than anything the session holds: a handler's
 * variables never decide how the store leaves the connection.
 */
const RESTORE_SESSION = `SET SESSION session_track_state_change = @@GLOBAL.session_track_state_change;
  SET SESSION TRANSACTION READ WRITE;
  SET SESSION wait_timeout = @@GLOBAL.wait_timeout, SESSION autocommit = @@GLOBAL.autocommit`

/** release(): roll back (the claim's row and lock go with it), restore the session for the pool. */
function releaseSql(n: SchemaNames): string {
  return `CREATE PROCEDURE IF NOT EXISTS ${n.release}()
BEGIN
  ROLLBACK;
  ${RESTORE_SESSION};
END`
}

/**
 * record_answer(code, kept, ttlMs) -> one row (failures, codes newest first, comma
 * separated). A NULL code (a 2xx answer) resets the streak.
 */
function recordAnswerSql(n: SchemaNames): string {
  const live = `expires_at > ${NOW_MS}`
  return `CREATE PROCEDURE IF NOT EXISTS ${n.recordAnswer}(
  IN p_code VARCHAR(64), IN p_kept INT, IN p_ttl_ms BIGINT)
body: BEGIN
  IF p_code IS NULL THEN
    DELETE FROM ${n.streak} WHERE name = 'answers';
    COMMIT;
    SELECT 0 AS failures, '' AS codes;
    LEAVE body;
  END IF;
  INSERT INTO ${n.streak} (name, failures, codes, expires_at)
    VALUES ('answers', 1, p_code, ${NOW_MS} + p_ttl_ms)
    ON DUPLICATE KEY UPDATE
      failures = IF(${live}, failures + 1, 1),
      codes = IF(${live}, SUBSTRING_INDEX(CONCAT(p_code, ',', codes), ',', p_kept), p_code),
      expires_at = ${NOW_MS} + p_ttl_ms;
  COMMIT;
  SELECT failures, codes FROM ${n.streak} WHERE name = 'answers';
END`
}

/** Everything after the version table, in order. Every statement is idempotent. */
export function schemaStatements(n: SchemaNames): string[] {
  return [
    ...tablesSql(n),
    settleSql(n),
    claimSql(n),
    commitSql(n),
    releaseSql(n),
    recordAnswerSql(n),
  ]
}

/**
 * The whole DDL as one text for the mysql client (procedures between
 * `DELIMITER` lines): the version table, the tables, the procedures and the
 * version row. Running it twice changes nothing.
 */
export function mysqlSchema(options: MysqlSchemaOptions = {}): string {
  const n = schemaNames(options, 'mysqlSchema')
  const plain = (sql: string) => `${sql};\n`
  const routine = (sql: string) => `DELIMITER $$\n${sql}$$\nDELIMITER ;\n`
  const statements = statementsOf(n)
  return `-- @affiliate-webhooks/mysql, schema version ${MYSQL_SCHEMA_VERSION}\n${statements
    .map((sql) => (sql.startsWith('CREATE PROCEDURE') ? routine(sql) : plain(sql)))
    .join('\n')}`
}

/**
 * The same DDL as {@link mysqlSchema}, one statement per element and no
 * `DELIMITER` lines: for a migration tool or a driver that runs one statement
 * at a time (`for (const sql of mysqlSchemaStatements()) await pool.query(sql)`).
 */
export function mysqlSchemaStatements(options: MysqlSchemaOptions = {}): string[] {
  return statementsOf(schemaNames(options, 'mysqlSchemaStatements'))
}

/** The version table, the tables, the procedures and the version row, in order. */
const statementsOf = (n: SchemaNames) => [
  versionTableSql(n),
  ...schemaStatements(n),
  versionRowSql(n),
]
