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
 *
 * It is an early refusal with a clear message, not the guarantee (issue
 * 57): a text it cannot see into still ends the transaction, and the stores
 * answer that from what the server reports after each statement, and hold an
 * event whose mark a commit they did not send made durable (`event_held`). So
 * `CALL` is not refused: a procedure's body is not in the text, most
 * procedures commit nothing (PostgreSQL's cannot inside a transaction block),
 * and refusing every CALL on MySQL would refuse legitimate code; a MySQL
 * procedure that commits is caught when it returns, by the store's reading
 * of the server's status flags, and its event held, not answered as handled.
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

/** MariaDB's compound statements by the word that opens them, as an error names them. */
const COMPOUND = new Map([
  ['IF', 'IF ... END IF'],
  ['CASE', 'CASE ... END CASE'],
  ['LOOP', 'LOOP ... END LOOP'],
  ['REPEAT', 'REPEAT ... END REPEAT'],
  ['WHILE', 'WHILE ... END WHILE'],
  ['FOR', 'FOR ... END FOR'],
  ['BEGIN', 'BEGIN ... END'],
  ['DECLARE', 'DECLARE ... BEGIN ... END'],
])

/** What a compound statement's refusal adds to its name. */
const COMPOUND_NOTE = "a compound statement: write its control flow in the handler's code"

/**
 * A MariaDB compound statement, named, or undefined. MariaDB runs them
 * outside a stored program (`IF 1 THEN COMMIT; END IF`, `CASE`, `LOOP`,
 * `WHILE`, `REPEAT`, `FOR`, `BEGIN NOT ATOMIC ... END`, labelled `l: LOOP` or,
 * in Oracle mode, `<<l>> LOOP`, and Oracle mode's `DECLARE ... BEGIN ... END`),
 * and whatever is inside runs. They are refused whole, not read inside: the
 * statements inside start after THEN, ELSE, DO, LOOP, REPEAT, a handler's
 * FOR, in forms only a parser follows, and one missed lets a COMMIT or an
 * implicit commit through; the handler's own code does the same control flow
 * around plain statements. MySQL runs none of them outside a program (a
 * syntax error there), so refusing them costs nothing there.
 */
function compoundStatement(words: readonly string[]): string | undefined {
  // The lexer adds ':' after a first word followed by a colon, and '<<' for a
  // statement opening with `<<`: a label precedes the opener.
  const at = words[1] === ':' || words[0] === '<<' ? 2 : 0
  const opener = words[at]
  const name = opener === undefined ? undefined : COMPOUND.get(opener)
  if (name === undefined) return undefined
  if (opener === 'BEGIN' && words[at + 1] === 'NOT' && words[at + 2] === 'ATOMIC') {
    return `BEGIN NOT ATOMIC ... END (${COMPOUND_NOTE})`
  }
  // An unlabelled BEGIN [WORK] starts a transaction: refused as BEGIN.
  if (opener === 'BEGIN' && at === 0) return undefined
  return `${name} (${COMPOUND_NOTE})`
}

/** The head this statement's words are refused for on `dialect`, or undefined. */
function refusedHead(words: readonly string[], dialect: SqlDialect): string | undefined {
  const [first, second] = words
  if (first === undefined || harmless(words, dialect)) return undefined
  const compound = dialect === 'mysql' ? compoundStatement(words) : undefined
  if (compound !== undefined) return compound
  const two = second === undefined ? first : `${first} ${second}`
  if (ENDS_ANYWHERE.has(two) || ENDS_ON[dialect].has(two)) return two
  if (ENDS_ANYWHERE.has(first) || ENDS_ON[dialect].has(first)) {
    return second !== undefined && QUALIFIERS.has(second) ? two : first
  }
  if (dialect === 'postgres') return sessionSetting(words)
  return dialect === 'mysql' ? refusedOnMysql(words) : undefined
}

/** What follows SET on PostgreSQL and lasts only as long as the transaction. */
const TRANSACTION_SCOPED = new Set(['LOCAL', 'TRANSACTION', 'CONSTRAINTS'])

/**
 * A PostgreSQL SET or RESET that changes the session, not the transaction:
 * committed with the delivery, it stays on the pooled connection for whoever
 * uses it next (another delivery, the app). Refused as `SET <name>` or
 * `RESET <name>` with a hint to say SET LOCAL; the store's own promises do
 * not rest on it (its commits pin synchronous_commit, its calls are
 * schema-qualified), so this is a courtesy to the next user of the connection.
 */
function sessionSetting(words: readonly string[]): string | undefined {
  const [first, second, third] = words
  if (first === 'RESET') return `RESET ${second ?? ''}`.trim()
  if (first !== 'SET' || second === undefined || TRANSACTION_SCOPED.has(second)) return undefined
  return second === 'SESSION' && third !== undefined ? `SET SESSION ${third}` : `SET ${second}`
}

/**
 * MySQL's autocommit as a SET names it: `autocommit`, `@@autocommit`,
 * `@@session.autocommit` (`@@local.`, `@@global.`), any part quoted in
 * backticks (`` @@`session`.`autocommit` ``, the backticks taken out first).
 * A user variable (`@autocommit`, `` @`autocommit` ``: one `@`) is the app's
 * own, and setting it commits nothing.
 */
const AUTOCOMMIT = /^(?:@@(?:[^.@]+\.)?)?AUTOCOMMIT$/

/** Whether `words` (a SET's) name autocommit: among its assignments, or (rarely) read in a value. */
const namesAutocommit = (words: readonly string[]) =>
  words.some(
    (word, i) =>
      AUTOCOMMIT.test(word.includes('`') ? word.replaceAll('`', '') : word) &&
      // `@ autocommit`, a space after the `@`, is still a user variable.
      words[i - 1] !== '@',
  )

/**
 * MySQL's statements that commit, or may, beyond their first words: `SET
 * autocommit` among other assignments (turning it on commits), `SET STATEMENT
 * ... FOR` another statement, and SQL-level `PREPARE`/`EXECUTE` (the
 * statement prepared is a string this reader cannot see). (SET TRANSACTION
 * only sets the next transaction's characteristics: harmless.)
 */
function refusedOnMysql(words: readonly string[]): string | undefined {
  const [first, second] = words
  if (first === 'SET' && second === 'STATEMENT') {
    const inner = words.indexOf('FOR')
    const found = inner === -1 ? undefined : refusedHead(words.slice(inner + 1), 'mysql')
    return found === undefined ? undefined : `SET STATEMENT ... FOR ${found}`
  }
  if (first === 'SET' && namesAutocommit(words)) return 'SET AUTOCOMMIT'
  if (first === 'PREPARE' || first === 'EXECUTE') return first
  return undefined
}

/** Character codes the reader looks at. */
const NEWLINE = 10
const RETURN = 13
const DQUOTE = 34
const HASH = 35
const DOLLAR = 36
const QUOTE = 39
const STAR = 42
const DASH = 45
const DOT = 46
const SLASH = 47
const COLON = 58
const SEMICOLON = 59
const LESS = 60
const EQUALS = 61
const BRACKET = 91
const BACKSLASH = 92
const BACKTICK = 96

/**
 * Whether `code` may start a name. Every non-ASCII character may: PostgreSQL
 * and SQLite read any byte over 0x7f as a name's, MySQL any character from
 * U+0080 on, so `é$x$` is one name to PostgreSQL (not `é` and a dollar quote
 * `$x$`), and so it is here. `@` starts MySQL's variables (`@@autocommit`).
 */
const nameStart = (code: number) =>
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  code === 95 ||
  code === 64 ||
  code >= 0x80

/** Whether `code` may go on a name: digits and `$` too, and `.` (so `new.begin` is no BEGIN). */
const nameChar = (code: number) =>
  nameStart(code) || (code >= 48 && code <= 57) || code === DOLLAR || code === DOT

/**
 * A word upper-cased as the servers match keywords: ASCII letters only. A
 * word with other letters is never a keyword (`'ı'.toUpperCase()` is `'I'`,
 * but `commıt` is a name to the server, not COMMIT).
 */
const upper = (raw: string, ascii: boolean) =>
  ascii ? raw.toUpperCase() : raw.replace(/[a-z]+/g, (letters) => letters.toUpperCase())

/** Index just past a quoted run starting at `at` with `quote`, doubled quotes kept inside. */
function skipQuoted(sql: string, at: number, quote: number, backslash: boolean): number {
  if (!backslash) {
    // Long quoted values are common (a bulk INSERT's): let indexOf find the quotes.
    const char = String.fromCharCode(quote)
    for (let i = at + 1; ; ) {
      const end = sql.indexOf(char, i)
      if (end === -1) return sql.length
      if (sql.charCodeAt(end + 1) !== quote) return end + 1
      i = end + 2
    }
  }
  let i = at + 1
  while (i < sql.length) {
    const c = sql.charCodeAt(i)
    if (c === BACKSLASH) i += 2
    else if (c === quote) {
      if (sql.charCodeAt(i + 1) !== quote) return i + 1
      i += 2
    } else i++
  }
  return sql.length
}

/** Whether `code` goes on a PostgreSQL identifier: letters, digits, `_`, `$`, any byte over 0x7f (not `@`, `.`). */
const pgNameChar = (code: number) =>
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  (code >= 48 && code <= 57) ||
  code === 95 ||
  code === DOLLAR ||
  code >= 0x80

/**
 * PostgreSQL's E'...' string, where a backslash escapes the quote: an E that
 * does not end a name (`@@E'x\' '` is the operator @@ and an E-string).
 */
const escapeString = (sql: string, at: number, dialect: SqlDialect) =>
  dialect === 'postgres' &&
  (sql[at - 1] === 'E' || sql[at - 1] === 'e') &&
  !pgNameChar(sql.charCodeAt(at - 2))

/**
 * Whether a backslash escapes a quote in a plain string here. The session
 * decides, and a handler may change it (PostgreSQL's
 * standard_conforming_strings = off, MySQL's NO_BACKSLASH_ESCAPES): a text
 * with a backslash is read both ways (`flip`), and refused if either reading
 * finds a statement to refuse.
 */
const backslashEscapes = (dialect: SqlDialect, flip: boolean) =>
  dialect === 'mysql' ? !flip : dialect === 'postgres' ? flip : false

/**
 * Index past SQLite's variable at `at` (`$a`, `@a`, `:a`, `#a`, and the Tcl
 * form `$a(...)`, whose parentheses take anything up to `)` or a blank, a
 * quote included), or `at` when none starts there.
 */
function skipSqliteVariable(sql: string, at: number): number {
  let i = at + 1
  while (i < sql.length) {
    const c = sql.charCodeAt(i)
    if (nameChar(c) && c !== DOT) i++
    else if (c === COLON && sql.charCodeAt(i + 1) === COLON) i += 2
    else if (c === 40 && i > at + 1) {
      while (i < sql.length && sql.charCodeAt(i) > 32 && sql.charCodeAt(i) !== 41) i++
      return i < sql.length && sql.charCodeAt(i) === 41 ? i + 1 : i
    } else break
  }
  return i > at + 1 ? i : at
}

/** SQLite's variable marks. */
const isSqliteVariableMark = (code: number) =>
  code === DOLLAR || code === 64 || code === COLON || code === HASH

/**
 * Index past the -- comment at `at`. PostgreSQL ends it at a carriage return
 * too; MySQL reads `--` as a comment only before a space or a control
 * character (`1--1` is one minus minus one there): else `at`.
 */
function skipDashComment(sql: string, at: number, dialect: SqlDialect): number {
  if (dialect === 'mysql') {
    const after = sql.charCodeAt(at + 2)
    if (after > 32 && after !== 127) return at
  }
  if (dialect !== 'postgres') {
    const end = sql.indexOf('\n', at)
    return end === -1 ? sql.length : end + 1
  }
  for (let i = at + 2; i < sql.length; i++) {
    const c = sql.charCodeAt(i)
    if (c === NEWLINE || c === RETURN) return i + 1
  }
  return sql.length
}

/**
 * Index past the block comment at `at`. PostgreSQL's nest (`/* a /* b *\/ c *\/`
 * is one comment); MySQL runs the inside of /*! ... *\/ and MariaDB of
 * /*M! ... *\/ (a version may follow the mark): skip the mark alone, and read
 * the inside. An unclosed comment runs to the end of the text.
 */
function skipBlockComment(sql: string, at: number, dialect: SqlDialect): number {
  if (dialect === 'mysql') {
    const mark = /^\/\*M?!\d*/.exec(sql.slice(at, at + 12))?.[0]
    if (mark !== undefined) return at + mark.length
  }
  if (dialect !== 'postgres') {
    const end = sql.indexOf('*/', at + 2)
    return end === -1 ? sql.length : end + 2
  }
  let depth = 1
  let i = at + 2
  while (i < sql.length) {
    const c = sql.charCodeAt(i)
    const next = sql.charCodeAt(i + 1)
    if (c === SLASH && next === STAR) {
      depth++
      i += 2
    } else if (c === STAR && next === SLASH) {
      depth--
      i += 2
      if (depth === 0) return i
    } else i++
  }
  return sql.length
}

/** A PostgreSQL dollar quote's opening: `$$` or `$tag$`, the tag a name (non-ASCII letters too). */
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y

/** Index past the dollar quote at `at`, or `at` if none starts there (`$1`). */
function skipDollarQuote(sql: string, at: number): number {
  DOLLAR_TAG.lastIndex = at
  const tag = DOLLAR_TAG.exec(sql)?.[0]
  if (tag === undefined) return at
  const end = sql.indexOf(tag, at + tag.length)
  return end === -1 ? sql.length : end + tag.length
}

/** Index past the comment, quoted text or dollar quote starting at `at`, or `at` if none starts there. */
function skipOpaque(sql: string, at: number, dialect: SqlDialect, flip: boolean): number {
  switch (sql.charCodeAt(at)) {
    case DASH:
      return sql.charCodeAt(at + 1) === DASH ? skipDashComment(sql, at, dialect) : at
    case HASH: {
      if (dialect !== 'mysql') return at
      const end = sql.indexOf('\n', at)
      return end === -1 ? sql.length : end + 1
    }
    case SLASH:
      return sql.charCodeAt(at + 1) === STAR ? skipBlockComment(sql, at, dialect) : at
    case QUOTE:
      return skipQuoted(
        sql,
        at,
        QUOTE,
        backslashEscapes(dialect, flip) || escapeString(sql, at, dialect),
      )
    case DQUOTE:
      return skipQuoted(sql, at, DQUOTE, dialect === 'mysql' && !flip)
    case BACKTICK:
      return dialect === 'sqlite' ? skipQuoted(sql, at, BACKTICK, false) : at
    case BRACKET: {
      if (dialect !== 'sqlite') return at
      const end = sql.indexOf(']', at + 1)
      return end === -1 ? sql.length : end + 1
    }
    case DOLLAR:
      return dialect === 'postgres' ? skipDollarQuote(sql, at) : at
    default:
      return at
  }
}

/** Whether `words` open a SQLite trigger: CREATE [TEMP|TEMPORARY] TRIGGER. */
const opensTrigger = (words: readonly string[]) =>
  words[0] === 'CREATE' &&
  (words[1] === 'TRIGGER' ||
    ((words[1] === 'TEMP' || words[1] === 'TEMPORARY') && words[2] === 'TRIGGER'))

/** The statements a SQLite trigger's body holds: its BEGIN is followed by one of these. */
const BODY_HEADS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'VALUES'])

/**
 * Where the reading of a SQLite trigger is: `head` until the ON of its
 * table, `tail` until its body's BEGIN, `begin` on a BEGIN that may be it,
 * `body` inside (a `;` ends an inner statement, not the trigger), `after`
 * past the body's END.
 */
type TriggerPart = 'none' | 'head' | 'tail' | 'begin' | 'body' | 'after'

/** The words kept of a statement: its first words decide what it does to the transaction. */
const MAX_WORDS = 64
/**
 * Words read of a statement past which, with no `;` left in the text, the
 * rest is not read: what it does is in its first words (`l: BEGIN NOT ATOMIC`
 * is the longest head read), not in a bulk INSERT's rows.
 */
const DECIDING_WORDS = 5
/** A longer word is kept cut: no keyword is that long. */
const MAX_WORD = 256

/** The statement being read: its words so far, and whether a `;` ends it. */
class Statement {
  words: string[] = []
  trigger: TriggerPart = 'none'
  // In a trigger's body, whether the next word starts an inner statement.
  innerStart = false

  readonly dialect: SqlDialect

  constructor(dialect: SqlDialect) {
    this.dialect = dialect
  }

  /**
   * Whether every word counts: a MySQL SET's assignment to autocommit may be
   * its last (`SET STATEMENT ... FOR` ends in another statement).
   */
  private readWhole(): boolean {
    return this.dialect === 'mysql' && this.words[0] === 'SET'
  }

  /** Whether the next word counts (a long statement's later words cost nothing to skip). */
  wants(): boolean {
    return this.words.length < MAX_WORDS || this.readWhole() || this.trigger !== 'none'
  }

  add(word: string): void {
    if (this.words.length < MAX_WORDS || this.readWhole()) this.words.push(word)
    if (this.dialect === 'sqlite') this.followTrigger(word)
  }

  /**
   * Follows a SQLite trigger to its body and past it. `begin` and `end` may
   * be names (SQLite takes both for one: `UPDATE OF begin, end ON begin`),
   * so a word BEGIN opens the body only after the table's ON (a keyword that
   * is never a bare name) and only when an inner statement follows it
   * straight, where a name `begin` in `WHEN new . begin = 1` is followed by
   * an operator, or by FOR, WHEN or BEGIN. The body ends at an END where an
   * inner statement would start: no inner statement starts with END, and a
   * CASE's END (or a column `end`) is always inside one.
   */
  private followTrigger(word: string): void {
    switch (this.trigger) {
      case 'none':
        if (this.words.length <= 3 && opensTrigger(this.words)) this.trigger = 'head'
        return
      case 'head':
        if (word === 'ON') this.trigger = 'tail'
        return
      case 'begin':
        this.trigger = BODY_HEADS.has(word) ? 'body' : word === 'BEGIN' ? 'begin' : 'tail'
        return
      case 'tail':
        if (word === 'BEGIN') this.trigger = 'begin'
        return
      case 'body':
        if (this.innerStart && word === 'END') this.trigger = 'after'
        this.innerStart = false
        return
      default:
        return
    }
  }

  /**
   * Notes the punctuation at `at` that a statement's reading needs: a MySQL
   * label's, or anything after a trigger's BEGIN (no body follows then).
   */
  punctuation(sql: string, at: number): void {
    if (this.trigger === 'begin') this.trigger = 'tail'
    if (this.dialect !== 'mysql') return
    const code = sql.charCodeAt(at)
    // `l: LOOP` (not `@a := 1`), and Oracle mode's `<<l>> LOOP`.
    if (code === COLON && this.words.length === 1 && sql.charCodeAt(at + 1) !== EQUALS) {
      this.words.push(':')
    } else if (code === LESS && this.words.length === 0 && sql.charCodeAt(at + 1) === LESS) {
      this.words.push('<<')
    }
  }

  /** Whether the words read settle what the statement does (no `;` left: nothing else follows). */
  decided(): boolean {
    return this.words.length >= DECIDING_WORDS && !this.readWhole()
  }

  /** Takes a `;`: whether it ends the statement (in a trigger's body, it ends an inner one). */
  semicolon(): boolean {
    if (this.trigger !== 'body') return true
    this.innerStart = true
    return false
  }

  /** The words read, and a new statement begun. */
  take(): string[] {
    const words = this.words
    this.words = []
    this.trigger = 'none'
    this.innerStart = false
    return words
  }
}

/** Index past the name at `at`, its word (upper-cased) added to `statement`. */
function readName(sql: string, at: number, statement: Statement): number {
  let i = at
  let ascii = true
  while (i < sql.length) {
    const c = sql.charCodeAt(i)
    if (c === BACKTICK && statement.dialect === 'mysql') {
      // A quoted part of a MySQL name, kept in its word with its backticks
      // (`` @@session.`autocommit` ``): a quoted name is no keyword, but a
      // SET may name autocommit so.
      i = skipQuoted(sql, i, BACKTICK, false)
      ascii = false
    } else if (nameChar(c)) {
      if (c >= 0x80) ascii = false
      i++
    } else break
  }
  if (statement.wants()) statement.add(upper(sql.slice(at, Math.min(i, at + MAX_WORD)), ascii))
  return i
}

/**
 * Reads `sql` statement by statement, giving each statement's words to
 * `visit` as it ends, until `visit` answers true. Nothing is cut before a
 * statement's first words, whatever precedes them (padding, comments); past
 * the last `;` of the text, once the last statement's first words are read,
 * its rest (a bulk INSERT's rows) is not.
 */
function readStatements(
  sql: string,
  dialect: SqlDialect,
  visit: (words: string[]) => boolean,
  flip = false,
) {
  const statement = new Statement(dialect)
  // The next `;` at or after i, looked for only once a statement is decided.
  let semicolon = -1
  let i = 0
  while (i < sql.length) {
    const code = sql.charCodeAt(i)
    if (code <= 32) i++
    else if (
      dialect === 'sqlite' &&
      isSqliteVariableMark(code) &&
      skipSqliteVariable(sql, i) !== i
    ) {
      i = skipSqliteVariable(sql, i)
    } else if (nameStart(code) || (code === BACKTICK && dialect === 'mysql')) {
      i = readName(sql, i, statement)
      if (statement.decided() && semicolon < i) {
        semicolon = sql.indexOf(';', i)
        if (semicolon === -1) break
      }
    } else if (code === SEMICOLON) {
      if (statement.semicolon() && statement.words.length > 0 && visit(statement.take())) return
      i++
    } else {
      const past = skipOpaque(sql, i, dialect, flip)
      if (past === i) statement.punctuation(sql, i)
      i = past === i ? i + 1 : past
    }
  }
  if (statement.words.length > 0) visit(statement.take())
}

/**
 * The words of each statement of `sql`, upper-cased (ASCII letters), outside
 * quotes and comments (at most 64 a statement, and of the last, when no `;`
 * follows, its first few): its first words decide what it does to the
 * transaction, a few statements need more (a MySQL SET is read whole).
 */
export function statementWords(sql: string, dialect: SqlDialect): string[][] {
  const statements: string[][] = []
  readStatements(sql, dialect, (words) => {
    statements.push(words)
    return false
  })
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
  const visit = (words: string[]) => {
    found = refusedHead(words, dialect)
    return found !== undefined
  }
  readStatements(sql, dialect, visit)
  // A backslash reads two ways, as the session may have it (backslashEscapes).
  if (found === undefined && dialect !== 'sqlite' && sql.includes('\\')) {
    readStatements(sql, dialect, visit, true)
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
  if (/^(SET|RESET) /.test(statement) && !/AUTOCOMMIT|STATEMENT/.test(statement)) {
    return txError(
      'ERR_AW_TX_CONTROL',
      `${store}: ctx.tx refused ${statement}: a session setting would outlive this delivery on a pooled connection and reach whoever uses it next. Use SET LOCAL (it ends with the delivery's transaction).`,
    )
  }
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
