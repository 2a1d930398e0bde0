/**
 * The tables and procedures of the MySQL store, as one list of statements: the
 * store runs them on first use, and `affiliate-webhooks sql schema --mysql`
 * prints them (with the `DELIMITER` lines the mysql client needs) for teams that
 * run their own migrations.
 *
 * Tables (`p` = tablePrefix, default `aw_`):
 *   p_events       event_id -> expires_at    handled (or judged stale), kept dedupeTtl
 *   p_conversions  conversion_id -> watermark the newest order handled, kept orderingTtl
 *   p_streak       name -> failures, codes    answers in a row that were not 2xx
 *   p_schema       version                   which layout these tables have
 *
 * Times are milliseconds since the epoch (UTC) on the server's clock, so every
 * process agrees on what has expired. A claim writes a sentinel inside the
 * delivery's transaction: the new watermark (expires_at kept in the session's
 * @aw_claim_until), or for an event without a conversion an events row whose
 * expires_at is NULL; the commit finds it again only if that transaction is
 * still the one it began.
 *
 * Locks are named locks (GET_LOCK), never rows: the event's is tried without
 * waiting (held -> in_progress at once), the conversion's polled for at most
 * lockWaitMs. They belong to the session, so the server drops them when the
 * connection goes (a killed process holds nothing); the procedures release
 * them after COMMIT or ROLLBACK.
 */

/** The layout these procedures expect; tables of another version are refused. */
export const MYSQL_SCHEMA_VERSION = 1

/**
 * The revision of the begin and commit procedures on these tables: revision 2
 * answers nothing when it claims or commits (the common case), reads the mark
 * and the watermark once, and writes the new watermark at begin as the claim's
 * sentinel (one write fewer than an events sentinel written and then updated).
 * Procedures of revision 1 (`begin_v1`, `commit_v1`) take the same locks on the
 * same rows, so processes of both can run side by side during a deploy.
 */
const PROCEDURE_REVISION = 'r2'

/** Where the store's tables live. */
export interface MysqlSchemaOptions {
  /** Prefix of every table and procedure name. Default `aw_`. */
  tablePrefix?: string | undefined
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/

/** Table and procedure names, checked once. */
export interface SchemaNames {
  prefix: string
  events: string
  conversions: string
  streak: string
  version: string
  begin: string
  commit: string
  release: string
  recordAnswer: string
  prune: string
}

export function schemaNames(options: MysqlSchemaOptions, caller: string): SchemaNames {
  const prefix = options.tablePrefix ?? 'aw_'
  if (!IDENTIFIER.test(prefix)) {
    throw new TypeError(
      `${caller}: \`tablePrefix\` must be lower-case letters, digits and _ (at most 40), starting with a letter or _; got ${JSON.stringify(prefix)}`,
    )
  }
  const name = (suffix: string) => `\`${prefix}${suffix}\``
  // Procedures carry the schema version (and begin and commit their revision):
  // a newer store creates its own beside them, never calls old ones of other semantics.
  const procedure = (suffix: string, revision = '') =>
    name(`${suffix}_v${MYSQL_SCHEMA_VERSION}${revision}`)
  return {
    prefix,
    events: name('events'),
    conversions: name('conversions'),
    streak: name('streak'),
    version: name('schema'),
    begin: procedure('begin', PROCEDURE_REVISION),
    commit: procedure('commit', PROCEDURE_REVISION),
    release: procedure('release'),
    recordAnswer: procedure('record_answer'),
    prune: procedure('prune'),
  }
}

/** Now, in milliseconds since the epoch, whatever the session's time zone. */
const NOW_MS = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"

/**
 * A named lock's name: server-wide, so it carries the database and the prefix;
 * hashed, because MySQL refuses names over 64 characters.
 */
const lockName = (n: SchemaNames, kind: string, key: string) =>
  `CONCAT('aw:', SHA1(CONCAT(DATABASE(), '.${n.prefix}:${kind}:', ${key})))`

/**
 * The columns each table of this layout has, by name suffix: a table that exists
 * without them was made by something else (an older version, another tool) and
 * is refused rather than used.
 */
export const TABLE_COLUMNS = {
  events: ['event_id', 'expires_at'],
  conversions: ['conversion_id', 'watermark', 'expires_at'],
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

/**
 * begin(event, conversion, order, leaseSeconds, dedupeMs, orderingMs). Claimed,
 * it answers nothing (no result set: the common case costs the least): the
 * event and conversion locks are held, the transaction is open with the
 * claim's sentinel in it, and the session's wait_timeout is the lease (the
 * server ends a session idle past it, rolling back and dropping the locks).
 * The sentinel is the new watermark when there is a conversion (commit would
 * write it anyway; it is kept in @aw_claim_until), else the event's row with a
 * NULL expires_at. Otherwise one row (status, holder): `locked`, the event lock
 * is held but another event of the conversion runs: call again (polling) or
 * release; `in_progress` names the session holding the event; `duplicate` and
 * `stale` (marked done, committed) leave nothing held.
 */
function beginSql(n: SchemaNames): string {
  // One read of the mark and the watermark, a SELECT ... INTO, which InnoDB
  // serves from the snapshot without locks; a subquery in an IF condition
  // would take shared next-key locks and hold them to the end of the
  // transaction (the handler's too).
  const read = `SELECT
      (SELECT COUNT(*) FROM ${n.events} WHERE event_id = p_event AND expires_at > ${NOW_MS}),
      (SELECT watermark FROM ${n.conversions} WHERE conversion_id = p_conversion AND expires_at > ${NOW_MS})
      INTO v_done, v_mark`
  const markDone = `INSERT INTO ${n.events} (event_id, expires_at) VALUES (p_event, ${NOW_MS} + p_dedupe_ms)
        ON DUPLICATE KEY UPDATE expires_at = ${NOW_MS} + p_dedupe_ms`
  // After the read: a duplicate or a stale event is settled here, nothing held after.
  const settled = `IF v_done > 0 THEN
      COMMIT;
      DO RELEASE_ALL_LOCKS();
      SELECT 'duplicate' AS status, NULL AS holder;
      LEAVE body;
    END IF;
    IF v_mark IS NOT NULL AND v_mark >= p_order THEN
      ${markDone};
      COMMIT;
      DO RELEASE_ALL_LOCKS();
      SELECT 'stale' AS status, NULL AS holder;
      LEAVE body;
    END IF;`
  return `CREATE PROCEDURE IF NOT EXISTS ${n.begin}(
  IN p_event VARBINARY(255), IN p_conversion BIGINT, IN p_order BIGINT,
  IN p_lease_s INT, IN p_dedupe_ms BIGINT, IN p_ordering_ms BIGINT)
body: BEGIN
  DECLARE v_mark BIGINT DEFAULT NULL;
  DECLARE v_done INT DEFAULT 0;
  IF COALESCE(GET_LOCK(${lockName(n, 'e', 'p_event')}, 0), 0) <> 1 THEN
    SELECT 'in_progress' AS status, IS_USED_LOCK(${lockName(n, 'e', 'p_event')}) AS holder;
    LEAVE body;
  END IF;
  IF p_conversion IS NOT NULL THEN
    IF COALESCE(GET_LOCK(${lockName(n, 'c', 'p_conversion')}, 0), 0) <> 1 THEN
      -- Before waiting for the conversion: a duplicate or a stale event is
      -- answered now (watermarks only rise, so stale now is stale for good).
      ${read};
      ${settled}
      -- Ends the read's transaction on a session without autocommit: it waits holding nothing.
      COMMIT;
      SELECT 'locked' AS status, NULL AS holder;
      LEAVE body;
    END IF;
  END IF;
  -- The transaction starts after both locks, so its snapshot (taken at its first
  -- read) sees every commit of the last holder, who committed before letting go.
  -- START TRANSACTION also ends any transaction a session without autocommit left open.
  START TRANSACTION;
  ${read};
  ${settled}
  SET @aw_wait_timeout = @@SESSION.wait_timeout, SESSION wait_timeout = p_lease_s,
    @aw_claim_until = ${NOW_MS} + p_ordering_ms;
  IF p_conversion IS NULL THEN
    INSERT INTO ${n.events} (event_id, expires_at) VALUES (p_event, NULL)
      ON DUPLICATE KEY UPDATE expires_at = NULL;
  ELSE
    -- The conversion lock is ours and the watermark below p_order (or expired):
    -- nobody else writes this row, so one keyed write takes it, with no gap lock
    -- (an UPDATE of a missing row would take one, and two such inserting into
    -- the same gap deadlock).
    INSERT INTO ${n.conversions} (conversion_id, watermark, expires_at)
      VALUES (p_conversion, p_order, @aw_claim_until)
      ON DUPLICATE KEY UPDATE watermark = p_order, expires_at = @aw_claim_until;
  END IF;
END`
}

/**
 * commit(event, conversion, order, dedupeMs, orderingMs). Committed, it answers
 * nothing; otherwise one row (committed = 0): the claim's sentinel is gone, so
 * the transaction the claim began was rolled back (a deadlock, a handler's
 * ROLLBACK), and nothing is committed.
 */
function commitSql(n: SchemaNames): string {
  const restore = 'SET SESSION wait_timeout = COALESCE(@aw_wait_timeout, @@GLOBAL.wait_timeout)'
  // Keyed by the primary key alone: without the hint the optimizer weighs the
  // expires_at index too, which costs more than the statement.
  return `CREATE PROCEDURE IF NOT EXISTS ${n.commit}(
  IN p_event VARBINARY(255), IN p_conversion BIGINT, IN p_order BIGINT,
  IN p_dedupe_ms BIGINT, IN p_ordering_ms BIGINT)
body: BEGIN
  DECLARE v_held INT DEFAULT 0;
  IF p_conversion IS NULL THEN
    UPDATE ${n.events} FORCE INDEX (PRIMARY) SET expires_at = ${NOW_MS} + p_dedupe_ms
      WHERE event_id = p_event AND expires_at IS NULL;
    SET v_held = ROW_COUNT();
  ELSE
    -- Begin's watermark, seen only while its transaction is this one: after a
    -- rollback the row is the committed one, older (below p_order) or expired
    -- at another time, and nobody else wrote it (the conversion lock is ours).
    SELECT COUNT(*) INTO v_held FROM ${n.conversions} FORCE INDEX (PRIMARY)
      WHERE conversion_id = p_conversion AND watermark = p_order AND expires_at = @aw_claim_until;
  END IF;
  IF v_held <> 1 THEN
    ROLLBACK;
    DO RELEASE_ALL_LOCKS();
    ${restore};
    SELECT 0 AS committed;
    LEAVE body;
  END IF;
  IF p_conversion IS NOT NULL THEN
    INSERT INTO ${n.events} (event_id, expires_at) VALUES (p_event, ${NOW_MS} + p_dedupe_ms)
      ON DUPLICATE KEY UPDATE expires_at = ${NOW_MS} + p_dedupe_ms;
  END IF;
  COMMIT;
  DO RELEASE_ALL_LOCKS();
  ${restore};
END`
}

/** release(): roll back, drop the locks, restore the session for the pool. */
function releaseSql(n: SchemaNames): string {
  return `CREATE PROCEDURE IF NOT EXISTS ${n.release}()
BEGIN
  ROLLBACK;
  DO RELEASE_ALL_LOCKS();
  SET SESSION wait_timeout = COALESCE(@aw_wait_timeout, @@GLOBAL.wait_timeout);
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

/**
 * prune(limit) -> one row (deleted): expired marks and watermarks, at most
 * `limit` of each, in short READ COMMITTED transactions that give up on a row
 * lock after a second (a claim's sentinel on an expired mark is left for later).
 */
function pruneSql(n: SchemaNames): string {
  const batch = (table: string) => `SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  DELETE FROM ${table} WHERE expires_at <= ${NOW_MS} ORDER BY expires_at LIMIT p_limit;
  SET v_deleted = v_deleted + GREATEST(ROW_COUNT(), 0);
  COMMIT;`
  return `CREATE PROCEDURE IF NOT EXISTS ${n.prune}(IN p_limit INT)
BEGIN
  DECLARE v_deleted INT DEFAULT 0;
  DECLARE v_lock_wait INT DEFAULT @@SESSION.innodb_lock_wait_timeout;
  DECLARE CONTINUE HANDLER FOR 1205, 1213 ROLLBACK;
  SET SESSION innodb_lock_wait_timeout = 1;
  ${batch(n.events)}
  ${batch(n.conversions)}
  SET SESSION innodb_lock_wait_timeout = v_lock_wait;
  SELECT v_deleted AS deleted;
END`
}

/** Everything after the version table, in order. Every statement is idempotent. */
export function schemaStatements(n: SchemaNames): string[] {
  return [
    ...tablesSql(n),
    beginSql(n),
    commitSql(n),
    releaseSql(n),
    recordAnswerSql(n),
    pruneSql(n),
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
