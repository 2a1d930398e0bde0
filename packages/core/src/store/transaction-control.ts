/**
 * What a handler may not send through `ctx.tx`: a statement that would end or
 * split the delivery's transaction. The store's handled mark was written in
 * that transaction; a `COMMIT` from the handler commits it early (and frees
 * the conversion's row while the handler still runs), a `ROLLBACK` drops it,
 * and whatever follows runs outside any transaction, where neither the
 * store's commit nor its rollback reaches it. The SQL stores refuse such
 * statements before they reach the server, with an error saying what to do.
 *
 * This reads statement heads only (a lexer, not a parser): comments, quoted
 * text, quoted names and PostgreSQL dollar quotes are skipped, and every
 * statement of a multi-statement text is looked at.
 */

/** The SQL dialect of a store: what a statement does to the open transaction differs. */
export type SqlDialect = 'postgres' | 'mysql' | 'sqlite'

/** Statements that end or start a transaction on every dialect. */
const ENDS_ANYWHERE = new Set(['BEGIN', 'COMMIT', 'ROLLBACK', 'START TRANSACTION'])

/** Per dialect, more heads that end the transaction or commit it implicitly. */
const ENDS_ON: Record<SqlDialect, ReadonlySet<string>> = {
  postgres: new Set(['END', 'ABORT', 'PREPARE TRANSACTION', 'COMMIT PREPARED']),
  sqlite: new Set(['END', 'VACUUM', 'DETACH']),
  // MySQL commits implicitly before (and after) these: the mark with it, and
  // the conversion's row lock is gone while the handler still runs.
  mysql: new Set([
    'ALTER',
    'ANALYZE',
    'CACHE INDEX',
    'CHECK TABLE',
    'CREATE',
    'DROP',
    'FLUSH',
    'GRANT',
    'INSTALL',
    'LOAD INDEX',
    'LOCK',
    'OPTIMIZE',
    'RENAME',
    'REPAIR',
    'RESET',
    'REVOKE',
    'SET PASSWORD',
    'TRUNCATE',
    'UNINSTALL',
    'UNLOCK',
    'XA',
  ]),
}

/** Second words worth naming in an error (`CREATE TABLE`), not a table's name. */
const QUALIFIERS = new Set([
  'DATABASE',
  'DEFERRED',
  'EVENT',
  'EXCLUSIVE',
  'FUNCTION',
  'IMMEDIATE',
  'INDEX',
  'OR',
  'PROCEDURE',
  'SCHEMA',
  'SEQUENCE',
  'TABLE',
  'TABLES',
  'TRANSACTION',
  'TRIGGER',
  'UNIQUE',
  'USER',
  'VIEW',
  'WORK',
])

/** Words after a head that make it harmless (a savepoint, a temporary table). */
function harmless(words: readonly string[], dialect: SqlDialect): boolean {
  const [first, second, third] = words
  // ROLLBACK TO [SAVEPOINT] x undoes part of the transaction and keeps it open.
  if (
    first === 'ROLLBACK' &&
    (second === 'TO' || ((second === 'WORK' || second === 'TRANSACTION') && third === 'TO'))
  ) {
    return true
  }
  // MySQL and MariaDB: temporary tables do not commit implicitly.
  if (
    dialect === 'mysql' &&
    (first === 'CREATE' || first === 'DROP') &&
    (second === 'TEMPORARY' || (second === 'OR' && third === 'REPLACE' && words[3] === 'TEMPORARY'))
  ) {
    return true
  }
  return false
}

/** The head this statement's words are refused for on `dialect`, or undefined. */
function refusedHead(words: readonly string[], dialect: SqlDialect): string | undefined {
  const [first, second] = words
  if (first === undefined || harmless(words, dialect)) return undefined
  const two = second === undefined ? first : `${first} ${second}`
  if (ENDS_ANYWHERE.has(two) || ENDS_ON[dialect].has(two)) return two
  if (ENDS_ANYWHERE.has(first) || ENDS_ON[dialect].has(first)) {
    return second !== undefined && QUALIFIERS.has(second) ? two : first
  }
  return dialect === 'mysql' ? refusedOnMysql(words) : undefined
}

/** An assignment to autocommit, in any of MySQL's spellings (`@@session.autocommit`, ...). */
const AUTOCOMMIT = /(^|[.@])AUTOCOMMIT$/

/**
 * MySQL's statements that commit, or may, beyond their first words: `SET
 * autocommit` among other assignments (turning it on commits), `SET STATEMENT
 * ... FOR` another statement, and SQL-level `PREPARE`/`EXECUTE` (the
 * statement prepared is a string this reader cannot see). MariaDB's compound
 * `BEGIN NOT ATOMIC ... END` is refused as `BEGIN`. (SET TRANSACTION only sets
 * the next transaction's characteristics: harmless.)
 */
function refusedOnMysql(words: readonly string[]): string | undefined {
  const [first, second] = words
  if (first === 'SET' && second === 'STATEMENT') {
    const inner = words.indexOf('FOR')
    const found = inner === -1 ? undefined : refusedHead(words.slice(inner + 1), 'mysql')
    return found === undefined ? undefined : `SET STATEMENT ... FOR ${found}`
  }
  if (first === 'SET' && words.some((word) => AUTOCOMMIT.test(word))) return 'SET AUTOCOMMIT'
  if (first === 'PREPARE' || first === 'EXECUTE') return first
  return undefined
}

/** Index just past a quoted run starting at `at` with `quote`, doubled quotes kept inside. */
function skipQuoted(sql: string, at: number, quote: string, backslash: boolean): number {
  let i = at + 1
  while (i < sql.length) {
    const c = sql[i]
    if (backslash && c === '\\') i += 2
    else if (c === quote) {
      if (sql[i + 1] !== quote) return i + 1
      i += 2
    } else i++
  }
  return i
}

/** PostgreSQL's E'...' string, where a backslash escapes the quote. */
const escapeString = (sql: string, at: number, dialect: SqlDialect) =>
  dialect === 'postgres' &&
  (sql[at - 1] === 'E' || sql[at - 1] === 'e') &&
  !/[A-Za-z0-9_$]/.test(sql[at - 2] ?? '')

/** Index past the comment, quoted text or dollar quote starting at `at`, or `at` if none starts there. */
function skipOpaque(sql: string, at: number, dialect: SqlDialect): number {
  const c = sql[at]
  const next = sql[at + 1]
  if (c === '-' && next === '-') {
    const end = sql.indexOf('\n', at)
    return end === -1 ? sql.length : end + 1
  }
  if (c === '#' && dialect === 'mysql') {
    const end = sql.indexOf('\n', at)
    return end === -1 ? sql.length : end + 1
  }
  if (c === '/' && next === '*') {
    // MySQL runs the inside of /*! ... */ and MariaDB of /*M! ... */ (a version
    // may follow the mark): skip the mark alone, and read the inside.
    const mark = dialect === 'mysql' ? /^\/\*M?!\d*/.exec(sql.slice(at, at + 12))?.[0] : undefined
    if (mark !== undefined) return at + mark.length
    const end = sql.indexOf('*/', at + 2)
    return end === -1 ? sql.length : end + 2
  }
  if (c === "'")
    return skipQuoted(sql, at, "'", dialect === 'mysql' || escapeString(sql, at, dialect))
  if (c === '"') return skipQuoted(sql, at, '"', dialect === 'mysql')
  if (c === '`' && dialect !== 'postgres') return skipQuoted(sql, at, '`', false)
  if (c === '[' && dialect === 'sqlite') {
    const end = sql.indexOf(']', at + 1)
    return end === -1 ? sql.length : end + 1
  }
  if (c === '$' && dialect === 'postgres') {
    const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(sql.slice(at, at + 64))?.[0]
    if (tag === undefined) return at
    const end = sql.indexOf(tag, at + tag.length)
    return end === -1 ? sql.length : end + tag.length
  }
  return at
}

/** Whether the statement whose head is `words` has a body of statements ending in END (a SQLite trigger). */
const opensTrigger = (words: readonly string[]) =>
  words[0] === 'CREATE' && (words[1] === 'TRIGGER' || words[2] === 'TRIGGER')

/**
 * The words of each statement of `sql`, upper-cased, outside quotes and
 * comments (at most 64 a statement): its first words decide what it does to
 * the transaction, a few statements need more.
 */
export function statementWords(sql: string, dialect: SqlDialect): string[][] {
  const statements: string[][] = []
  let words: string[] = []
  // Inside a trigger's BEGIN ... END, semicolons end its inner statements, not it.
  let nesting = 0
  const endStatement = () => {
    if (words.length > 0) statements.push(words)
    words = []
  }
  let i = 0
  while (i < sql.length) {
    const past = skipOpaque(sql, i, dialect)
    if (past !== i) {
      i = past
      continue
    }
    const c = sql[i] as string
    if (/[A-Za-z_@]/.test(c)) {
      const word = (
        /^[A-Za-z_@][A-Za-z0-9_@.$]*/.exec(sql.slice(i, i + 64))?.[0] ?? c
      ).toUpperCase()
      if (words.length < 64) words.push(word)
      if (opensTrigger(words) && (word === 'BEGIN' || word === 'CASE')) nesting++
      else if (nesting > 0 && word === 'END') nesting--
      i += word.length
      continue
    }
    if (c === ';' && nesting === 0) endStatement()
    i++
  }
  endStatement()
  return statements
}

/** A text seen before: handlers send the same statements again and again. */
const CACHE_LIMIT = 512
const cache: Record<SqlDialect, Map<string, string | null>> = {
  postgres: new Map(),
  mysql: new Map(),
  sqlite: new Map(),
}

/**
 * The first statement in `sql` that would end, split or implicitly commit
 * the delivery's transaction on `dialect`, as its leading words upper-cased
 * (`'COMMIT'`, `'CREATE TABLE'`, `'SET AUTOCOMMIT'`); undefined when none.
 */
export function transactionControl(sql: string, dialect: SqlDialect): string | undefined {
  const seen = cache[dialect]
  const known = seen.get(sql)
  if (known !== undefined) return known ?? undefined
  let found: string | undefined
  // One statement, long (a bulk INSERT): what it does is in its first words,
  // read from its first 4 KiB, not from every row of it.
  const text = sql.length > 4096 && !sql.includes(';') ? sql.slice(0, 4096) : sql
  for (const words of statementWords(text, dialect)) {
    found = refusedHead(words, dialect)
    if (found !== undefined) break
  }
  // Texts with literals inlined never repeat: a full cache starts over.
  if (seen.size >= CACHE_LIMIT) seen.clear()
  if (sql.length <= 4096) seen.set(sql, found ?? null)
  return found
}

/** An error of ctx.tx with a stable `code`. */
function txError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

/**
 * The error ctx.tx throws, without sending the statement, for one that would
 * end or split the delivery's transaction (`code` `ERR_AW_TX_CONTROL`).
 */
export function refusedStatement(store: string, statement: string): Error {
  return txError(
    'ERR_AW_TX_CONTROL',
    `${store}: ctx.tx refused ${statement}: it would end or split the delivery's transaction, which holds the handled mark and commits it with your writes. Let the store commit (return from the handler) or roll back (throw); use a savepoint for a part that may fail; run DDL at setup, not in a handler.`,
  )
}

/**
 * The error every statement on ctx.tx gets once the delivery's transaction
 * ended under the handler (`code` `ERR_AW_TX_GONE`): what it wrote is gone,
 * and anything more would be committed on its own.
 */
export function transactionGone(store: string, why: string): Error {
  return txError(
    'ERR_AW_TX_GONE',
    `${store}: the delivery's transaction is gone (${why}): ctx.tx takes no more statements, and nothing the handler wrote is kept. Let the error propagate (throw) so the service's retry runs the handler again.`,
  )
}

/**
 * The error every statement on ctx.tx gets once the claim is settled
 * (committed, released) or past its lease (`code` `ERR_AW_TX_OVER`): the
 * connection may serve another delivery by then.
 */
export function transactionOver(store: string): Error {
  return txError(
    'ERR_AW_TX_OVER',
    `${store}: this delivery's transaction is over (committed, rolled back, or past its lease): ctx.tx takes no more statements`,
  )
}
