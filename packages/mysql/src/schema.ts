/**
 * The tables and procedures of the MySQL store, as one list of statements: the
 * store runs them on first use, and `affiliate-webhooks sql schema --mysql`
 * prints them (with the `DELIMITER` lines the mysql client needs) for teams that
 * run their own migrations.
 *
 * Tables (`p` = tablePrefix, default `aw_`), layout 2:
 *   p_conversions  conversion_id -> watermark, event_id   the newest order handled and
 *                                                         its event: a conversion
 *                                                         event's handled mark, and
 *                                                         (its row lock) the
 *                                                         conversion's lock
 *   p_events       event_id -> expires_at    events without a conversion (webhook.test)
 *                                            and events judged stale
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
 */
import { checkSqlIdentifier } from '@affiliate-webhooks/core/internal'

/** The layout these procedures expect; tables of another version are refused. */
export const MYSQL_SCHEMA_VERSION = 2

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
  // changed (r2, claim and commit: the savepoint; r3 and release r2: autocommit
  // off while the handler runs): a newer store creates its own beside the
  // older ones, and each process only ever calls its own.
  const procedure = (suffix: string, revision = 1) =>
    name(`${suffix}_v${MYSQL_SCHEMA_VERSION}${revision === 1 ? '' : `r${revision}`}`)
  return {
    prefix,
    events: name('events'),
    conversions: name('conversions'),
    streak: name('streak'),
    version: name('schema'),
    claim: procedure('claim', 3),
    settle: procedure('settle'),
    commit: procedure('commit', 3),
    release: procedure('release', 2),
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
  events: ['event_id', 'expires_at'],
  conversions: ['conversion_id', 'watermark', 'event_id', 'expires_at'],
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

function tablesSql(n: SchemaNames): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${n.events} (
  event_id VARBINARY(255) NOT NULL PRIMARY KEY,
  expires_at BIGINT NULL,
  KEY ${n.prefix}events_expires (expires_at)
) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${n.conversions} (
  conversion_id BIGINT NOT NULL PRIMARY KEY,
  watermark BIGINT NOT NULL,
  event_id VARBINARY(255) NOT NULL,
  expires_at BIGINT NOT NULL,
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
        INSERT IGNORE INTO ${n.events} (event_id, expires_at) VALUES (p_event, v_until);
      ELSE
        INSERT IGNORE INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at)
          VALUES (p_conversion, p_order, p_event, v_until);
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
        START TRANSACTION;
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
 * session idle past it, rolling back), autocommit goes off when asked
 * (`p_autocommit_off`: so a statement after InnoDB rolled the transaction back
 * under the handler, a deadlock, opens a new transaction that the commit's
 * check rolls back, instead of committing on its own), the claim's savepoint
 * marks the transaction, and the procedure returns with it open. Turning
 * autocommit off inside a transaction commits nothing; commit and release
 * restore it.
 */
const claimedSql = (n: SchemaNames, indent = '    ') =>
  [
    'SET @aw_wait_timeout = @@SESSION.wait_timeout, SESSION wait_timeout = p_lease_s;',
    'SET @aw_autocommit = @@SESSION.autocommit, SESSION autocommit = IF(p_autocommit_off, 0, @@SESSION.autocommit);',
    `SAVEPOINT ${n.savepoint};`,
    'LEAVE body;',
  ].join(`\n${indent}`)

/** The transaction of the claim, READ COMMITTED, begun after whatever the session had open; lines indented by `indent`. */
const claimTransaction = (indent: string) =>
  ['COMMIT;', 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED;', 'START TRANSACTION;'].join(
    `\n${indent}`,
  )

/**
 * MariaDB only (in a \`/*M! ... *\/\` comment, which MySQL skips): the common
 * case in one upsert. A conversion event takes its row without waiting
 * (innodb_lock_wait_timeout 0 for the statement): it inserts the row of a new
 * conversion, or raises the watermark of one whose row no live transaction
 * holds. Which of the two, or neither, is told by LAST_INSERT_ID (0 inserted,
 * 1 raised, 2 not raised), set in the upsert itself: ROW_COUNT() cannot tell
 * an insert from an unchanged row when the client asks for found rows, as
 * mysql2 does. Neither (a settled event, or a row held by another
 * transaction: 1205 at once): roll back, and decide as below, with the
 * consistent read first and the bounded wait.
 */
const fastClaimSql = (n: SchemaNames) => `  /*M!
  IF p_conversion IS NOT NULL THEN
    ${claimTransaction('    ')}
    BEGIN
      DECLARE CONTINUE HANDLER FOR 1205 SET v_claimed = -1;
      SET v_claimed = LAST_INSERT_ID(0);
      SET STATEMENT innodb_lock_wait_timeout = 0 FOR
        INSERT INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at)
          VALUES (p_conversion, p_order, p_event, v_until)
          ON DUPLICATE KEY UPDATE
            watermark = IF(LAST_INSERT_ID(IF(watermark < p_order OR expires_at <= v_now, 1, 2)) = 1, p_order, watermark),
            event_id = IF(LAST_INSERT_ID() = 1, p_event, event_id),
            expires_at = IF(LAST_INSERT_ID() = 1, v_until, expires_at);
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
 * orderingMs). Claimed, it answers nothing (no result set: the common case
 * costs the least): the transaction is open with the claim's row written and
 * locked and the claim's savepoint set, and the session's wait_timeout is the
 * lease (the server ends a session idle past it, rolling back). Otherwise one row (verdict):
 * `duplicate` or `stale` (marked, committed), or `in_progress` (the row stayed
 * locked by another live transaction for waitSeconds, or a deadlock of racing
 * first events; rolled back).
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
  // below its order, or expired. Such an update always changes the row, so
  // ROW_COUNT() is 1 exactly when it claimed, whatever the client's FOUND_ROWS flag.
  const raise = `UPDATE ${n.conversions} SET watermark = p_order, event_id = p_event, expires_at = v_until
      WHERE conversion_id = p_conversion AND (watermark < p_order OR expires_at <= v_now)`
  const retake = `UPDATE ${n.events} SET expires_at = v_until
      WHERE event_id = p_event AND (expires_at IS NULL OR expires_at <= v_now)`
  return `CREATE PROCEDURE IF NOT EXISTS ${n.claim}(
  IN p_event VARBINARY(255), IN p_conversion BIGINT, IN p_order BIGINT,
  IN p_lease_s INT, IN p_wait_s INT, IN p_dedupe_ms BIGINT, IN p_ordering_ms BIGINT,
  IN p_autocommit_off TINYINT)
body: BEGIN
  DECLARE v_now BIGINT DEFAULT ${NOW_MS};
  DECLARE v_until BIGINT;
  DECLARE v_mark BIGINT DEFAULT NULL;
  DECLARE v_event VARBINARY(255) DEFAULT NULL;
  DECLARE v_expires BIGINT DEFAULT NULL;
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
${fastClaimSql(n)}
  -- The committed state, without a lock: a settled event is answered at once,
  -- even while a newer event of its conversion holds the row.
  IF p_conversion IS NULL THEN
    SELECT MAX(expires_at) INTO v_expires FROM ${n.events} WHERE event_id = p_event;
    IF v_expires > v_now THEN
      COMMIT;
      SELECT 'duplicate' AS verdict;
      LEAVE body;
    END IF;
  ELSE
    SELECT MAX(watermark), MAX(event_id), MAX(expires_at) INTO v_mark, v_event, v_expires
      FROM ${n.conversions} WHERE conversion_id = p_conversion;
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
  -- Not ours: the row is locked by this transaction now (its newest committed
  -- version decided, and a locking read returns that version, not the snapshot).
  IF p_conversion IS NULL THEN
    ROLLBACK;
    SELECT 'duplicate' AS verdict;
    LEAVE body;
  END IF;
  SET v_mark = NULL;
  SELECT watermark, event_id INTO v_mark, v_event FROM ${n.conversions}
    WHERE conversion_id = p_conversion FOR UPDATE;
  IF v_mark IS NULL THEN
    -- Pruned between the read and the update (it had expired): the gap is
    -- locked by this transaction now, so the row is this event's to insert.
    INSERT INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at)
      VALUES (p_conversion, p_order, p_event, v_until);
    ${claimedSql(n)}
  END IF;
  CALL ${n.settle}(p_event, v_event, p_dedupe_ms);
END`
}

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
 * commit(). Committed, it answers nothing; otherwise one row (committed = 0):
 * the claim's savepoint is gone, so the transaction the claim began was ended
 * under the handler (its own COMMIT or ROLLBACK, a deadlock), and the store
 * commits nothing. (The savepoint is checked, not the claim's row: a keyed
 * read here cost the delivery more than the rest of the commit.)
 */
function commitSql(n: SchemaNames): string {
  const restore = RESTORE_SESSION
  // 1305: "SAVEPOINT ... does not exist" (the same number as a missing
  // procedure, and the body calls none).
  return `CREATE PROCEDURE IF NOT EXISTS ${n.commit}()
BEGIN
  DECLARE EXIT HANDLER FOR 1305
  BEGIN
    ROLLBACK;
    ${restore};
    SELECT 0 AS committed;
  END;
  RELEASE SAVEPOINT ${n.savepoint};
  COMMIT;
  ${restore};
END`
}

/**
 * What the claim changed in the session, put back for the pool (after the
 * transaction ended: turning autocommit on would commit an open one).
 */
const RESTORE_SESSION =
  'SET SESSION wait_timeout = COALESCE(@aw_wait_timeout, @@GLOBAL.wait_timeout), SESSION autocommit = COALESCE(@aw_autocommit, @@SESSION.autocommit)'

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
