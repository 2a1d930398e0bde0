import { describe, expect, it } from 'vitest'
import {
  refusedStatement,
  statementWords,
  transactionControl,
  transactionGone,
} from './transaction-control.js'

describe('transactionControl', () => {
  it('refuses the statements that end or start a transaction, on every dialect', () => {
    for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
      expect(transactionControl('COMMIT', dialect)).toBe('COMMIT')
      expect(transactionControl('  commit work', dialect)).toBe('COMMIT WORK')
      expect(transactionControl('rollback', dialect)).toBe('ROLLBACK')
      expect(transactionControl('BEGIN', dialect)).toBe('BEGIN')
      expect(transactionControl('start transaction read write', dialect)).toBe('START TRANSACTION')
      expect(transactionControl('/* why */ -- so\n COMMIT;', dialect)).toBe('COMMIT')
    }
    expect(transactionControl('END', 'postgres')).toBe('END')
    expect(transactionControl('abort', 'postgres')).toBe('ABORT')
    expect(transactionControl("PREPARE TRANSACTION 'x'", 'postgres')).toBe('PREPARE TRANSACTION')
    expect(transactionControl('BEGIN IMMEDIATE', 'sqlite')).toBe('BEGIN IMMEDIATE')
    expect(transactionControl('end transaction', 'sqlite')).toBe('END TRANSACTION')
  })

  it('looks at every statement of a multi-statement text', () => {
    expect(transactionControl('INSERT INTO t VALUES (1); COMMIT', 'postgres')).toBe('COMMIT')
    expect(transactionControl('SELECT 1;;  ROLLBACK;', 'sqlite')).toBe('ROLLBACK')
    expect(transactionControl('INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)', 'mysql')).toBe(
      undefined,
    )
  })

  it('lets savepoints, rollbacks to them and ordinary statements through', () => {
    for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
      expect(transactionControl('SAVEPOINT a', dialect)).toBeUndefined()
      expect(transactionControl('ROLLBACK TO SAVEPOINT a', dialect)).toBeUndefined()
      expect(transactionControl('rollback to a', dialect)).toBeUndefined()
      expect(transactionControl('ROLLBACK WORK TO SAVEPOINT a', dialect)).toBeUndefined()
      expect(transactionControl('ROLLBACK TRANSACTION TO a', dialect)).toBeUndefined()
      expect(transactionControl('RELEASE SAVEPOINT a', dialect)).toBeUndefined()
      expect(transactionControl('INSERT INTO ledger VALUES (1)', dialect)).toBeUndefined()
      expect(transactionControl('UPDATE commit SET x = 1', dialect)).toBeUndefined()
      expect(transactionControl('SELECT begin, "end" FROM t', dialect)).toBeUndefined()
    }
  })

  it('skips quoted text, quoted names, comments and dollar quotes', () => {
    expect(transactionControl("INSERT INTO t VALUES ('a; COMMIT')", 'postgres')).toBeUndefined()
    expect(transactionControl('INSERT INTO t VALUES ($$a; COMMIT$$)', 'postgres')).toBeUndefined()
    expect(
      transactionControl("DO $body$ BEGIN PERFORM 1; END $body$; SELECT ';'", 'postgres'),
    ).toBeUndefined()
    expect(transactionControl("INSERT INTO t VALUES ('it''s; COMMIT')", 'sqlite')).toBeUndefined()
    // Under NO_BACKSLASH_ESCAPES (a session setting a handler may make) the string ends
    // at \' and COMMIT is a statement: refused, as the safer of the two readings.
    expect(transactionControl("INSERT INTO t VALUES ('a\\'; COMMIT')", 'mysql')).toBe('COMMIT')
    expect(transactionControl("INSERT INTO t VALUES ('a''; COMMIT')", 'mysql')).toBeUndefined()
    expect(transactionControl('SELECT 1 -- ; COMMIT', 'sqlite')).toBeUndefined()
    expect(transactionControl('SELECT 1 # ; COMMIT', 'mysql')).toBeUndefined()
    expect(transactionControl('SELECT `a;COMMIT` FROM t', 'mysql')).toBeUndefined()
    expect(transactionControl("SELECT E'it\\'s'; COMMIT", 'postgres')).toBe('COMMIT')
    expect(transactionControl("SELECT E'a\\'; COMMIT'", 'postgres')).toBeUndefined()
    expect(transactionControl('SELECT [a;COMMIT] FROM t', 'sqlite')).toBeUndefined()
    expect(transactionControl("SELECT [it's]; COMMIT", 'sqlite')).toBe('COMMIT')
  })

  it('refuses what MySQL commits implicitly, temporary tables aside', () => {
    expect(transactionControl('CREATE TABLE IF NOT EXISTS x (id int)', 'mysql')).toBe(
      'CREATE TABLE',
    )
    expect(transactionControl('lock tables t write', 'mysql')).toBe('LOCK TABLES')
    expect(transactionControl('UNLOCK TABLES', 'mysql')).toBe('UNLOCK TABLES')
    expect(transactionControl('TRUNCATE t', 'mysql')).toBe('TRUNCATE')
    expect(transactionControl('SET autocommit = 1', 'mysql')).toBe('SET AUTOCOMMIT')
    expect(transactionControl('set @@session.autocommit=1', 'mysql')).toBe('SET AUTOCOMMIT')
    expect(transactionControl('/*!40101 LOCK TABLES t WRITE */', 'mysql')).toBe('LOCK TABLES')
    expect(transactionControl('/*M! COMMIT */', 'mysql')).toBe('COMMIT')
    expect(transactionControl('/*M!100000 CREATE TABLE x (a int) */', 'mysql')).toBe('CREATE TABLE')
    expect(transactionControl('SELECT 1 /*!50000 , 2 */', 'mysql')).toBeUndefined()
    expect(transactionControl('CREATE TEMPORARY TABLE x (id int)', 'mysql')).toBeUndefined()
    expect(transactionControl('DROP TEMPORARY TABLE x', 'mysql')).toBeUndefined()
    expect(transactionControl('SET @a = 1', 'mysql')).toBeUndefined()
    expect(transactionControl('CREATE OR REPLACE TEMPORARY TABLE x (id int)', 'mysql')).toBe(
      undefined,
    )
    expect(transactionControl('SET SESSION autocommit = ON', 'mysql')).toBe('SET AUTOCOMMIT')
    expect(transactionControl('set names utf8mb4, autocommit=1', 'mysql')).toBe('SET AUTOCOMMIT')
    expect(transactionControl('SET STATEMENT max_statement_time=1 FOR COMMIT', 'mysql')).toBe(
      'SET STATEMENT ... FOR COMMIT',
    )
    expect(
      transactionControl('SET STATEMENT max_statement_time=1 FOR SELECT 1', 'mysql'),
    ).toBeUndefined()
    expect(transactionControl("PREPARE s FROM 'COMMIT'", 'mysql')).toBe('PREPARE')
    expect(transactionControl('EXECUTE s', 'mysql')).toBe('EXECUTE')
    expect(transactionControl("SET @note = 'autocommit'", 'mysql')).toBeUndefined()
    expect(transactionControl('SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'mysql')).toBe(
      undefined,
    )
  })

  it('lets transactional DDL through on PostgreSQL and SQLite', () => {
    expect(transactionControl('CREATE TABLE x (id int)', 'postgres')).toBeUndefined()
    expect(transactionControl('CREATE TABLE x (id int)', 'sqlite')).toBeUndefined()
    expect(
      transactionControl(
        'CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE b SET n = CASE WHEN n > 0 THEN 1 ELSE 0 END; INSERT INTO c VALUES (1); END; SELECT 1',
        'sqlite',
      ),
    ).toBeUndefined()
  })

  it('reads the words of each statement, quotes and comments left out', () => {
    expect(
      statementWords("insert into t values ('x') -- y\n; commit and chain", 'postgres'),
    ).toEqual([
      ['INSERT', 'INTO', 'T', 'VALUES'],
      ['COMMIT', 'AND', 'CHAIN'],
    ])
  })

  it('reads only the first words of a long text with one statement (a bulk INSERT)', () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => `(${i}, 'row ${i}')`).join(', ')
    const bulk = `INSERT INTO ledger (id, note) VALUES ${rows}`
    expect(transactionControl(bulk, 'postgres')).toBeUndefined()
    expect(transactionControl(`COMMIT ${rows}`, 'sqlite')).toBe('COMMIT')
    expect(transactionControl(`${bulk}; COMMIT`, 'postgres')).toBe('COMMIT')
  })

  it('answers a text seen before from its cache, the same way', () => {
    const text = `INSERT INTO t VALUES (1); COMMIT -- ${Math.random()}`
    expect(transactionControl(text, 'postgres')).toBe('COMMIT')
    expect(transactionControl(text, 'postgres')).toBe('COMMIT')
    const ok = `SELECT ${Math.random()}`
    expect(transactionControl(ok, 'sqlite')).toBeUndefined()
    expect(transactionControl(ok, 'sqlite')).toBeUndefined()
  })
})

const dialects = ['postgres', 'mysql', 'sqlite'] as const

describe('transactionControl: the gaps of issue 57', () => {
  it('finds the first word whatever precedes it: no cut of a long text before it', () => {
    const comment = `/* ${'why '.repeat(2000)} */`
    for (const dialect of dialects) {
      expect(transactionControl(`${' '.repeat(4100)}COMMIT`, dialect)).toBe('COMMIT')
      expect(transactionControl(`${'\n\t'.repeat(3000)}ROLLBACK`, dialect)).toBe('ROLLBACK')
      expect(transactionControl(`${'-- pad\n'.repeat(700)}COMMIT`, dialect)).toBe('COMMIT')
      expect(transactionControl(`${'/**/'.repeat(1100)} COMMIT`, dialect)).toBe('COMMIT')
      expect(transactionControl(`${comment} COMMIT`, dialect)).toBe('COMMIT')
      expect(transactionControl(`${comment} START TRANSACTION`, dialect)).toBe('START TRANSACTION')
    }
    // The statement that follows a long one is read, however long the first.
    const rows = Array.from({ length: 500 }, (_, i) => `(${i}, 'a;b')`).join(', ')
    expect(transactionControl(`INSERT INTO t VALUES ${rows}; COMMIT`, 'sqlite')).toBe('COMMIT')
    expect(transactionControl(`INSERT INTO t VALUES ${rows}`, 'sqlite')).toBeUndefined()
    // On MySQL a SET is read whole, however long: autocommit may be its last assignment.
    const many = Array.from({ length: 200 }, (_, i) => `@v${i} = ${i}`).join(', ')
    expect(transactionControl(`SET ${many}, autocommit = 1`, 'mysql')).toBe('SET AUTOCOMMIT')
  })

  it('reads non-ASCII characters in names, as the servers do (é$x$ is a name, not a dollar quote)', () => {
    const text = 'SELECT 1 AS é$x$; COMMIT; BEGIN; SELECT 1 AS é$x$'
    expect(transactionControl(text, 'postgres')).toBe('COMMIT')
    expect(transactionControl('SELECT 1 AS ✓$x$; COMMIT; SELECT $x$', 'postgres')).toBe('COMMIT')
    expect(statementWords('select naïve, übung from t;', 'postgres')).toEqual([
      ['SELECT', 'NAïVE', 'üBUNG', 'FROM', 'T'],
    ])
    // A dollar quote's tag may hold non-ASCII letters: its inside is text.
    expect(transactionControl('SELECT $é$; COMMIT $é$', 'postgres')).toBeUndefined()
    for (const dialect of dialects) {
      expect(transactionControl('SELECT prénom FROM t; COMMIT', dialect)).toBe('COMMIT')
      // A non-ASCII letter never makes a keyword ('ı' upper-cases to 'I').
      expect(transactionControl('commıt', dialect)).toBeUndefined()
      // 'ß' upper-cases to two letters: the next word is not misplaced.
      expect(transactionControl('SELECT straße; COMMIT', dialect)).toBe('COMMIT')
    }
  })

  it('ends a comment where each server does', () => {
    // PostgreSQL ends a -- comment at \r too; MySQL's -- needs a space after it.
    expect(transactionControl('SELECT 1 -- x\r; COMMIT', 'postgres')).toBe('COMMIT')
    expect(transactionControl('SELECT 1 -- x\r; COMMIT', 'sqlite')).toBeUndefined()
    expect(transactionControl('SELECT 1 --1; COMMIT', 'mysql')).toBe('COMMIT')
    expect(transactionControl('SELECT 1 -- 1; COMMIT', 'mysql')).toBeUndefined()
    expect(transactionControl('SELECT 1 --\t; COMMIT', 'mysql')).toBeUndefined()
  })

  it('reads nested comments on PostgreSQL', () => {
    expect(
      transactionControl('SELECT 1 /* a /* nested */ comment; COMMIT */', 'postgres'),
    ).toBeUndefined()
    expect(transactionControl('/* a /* b */ COMMIT', 'postgres')).toBeUndefined()
    expect(transactionControl('/* a /* b */ c */ COMMIT', 'postgres')).toBe('COMMIT')
    expect(transactionControl('/* a /*/ b */ COMMIT', 'postgres')).toBeUndefined()
    // MySQL and SQLite do not nest comments: the first */ closes.
    expect(transactionControl('/* a /* b */ COMMIT', 'mysql')).toBe('COMMIT')
    expect(transactionControl('/* a /* b */ COMMIT', 'sqlite')).toBe('COMMIT')
  })

  it('reads quoted names in a MySQL SET, and lets user variables named autocommit through', () => {
    for (const text of [
      'SET `autocommit` = 1',
      'SET @@`autocommit`=1',
      'SET SESSION `autocommit`=1',
      'SET @@session.`autocommit` = 1',
      'SET @@SESSION.`AutoCommit` := 1',
      'SET @@`session`.`autocommit` = 1',
      'SET @a = 1, `autocommit` = 1',
      'SET @@ autocommit = 1',
    ]) {
      expect(transactionControl(text, 'mysql'), text).toBe('SET AUTOCOMMIT')
    }
    for (const text of [
      'SET @autocommit = 1',
      'SET @`autocommit` = 1',
      "SET @'autocommit' = 1",
      'SET @"autocommit" = 1',
      'SET @ autocommit = 1',
      'SELECT `autocommit` FROM settings',
    ]) {
      expect(transactionControl(text, 'mysql'), text).toBeUndefined()
    }
  })

  it('refuses MariaDB compound statements on MySQL whole, whatever they hold', () => {
    const compound = "a compound statement: write its control flow in the handler's code"
    const refused: [string, string][] = [
      ['IF 1 THEN COMMIT; END IF', 'IF ... END IF'],
      ['if 1 then rollback; end if', 'IF ... END IF'],
      ['IF 1 THEN CREATE TABLE t (i int); END IF', 'IF ... END IF'],
      ['IF 1 THEN SELECT 1; ELSE COMMIT; END IF', 'IF ... END IF'],
      ['CASE WHEN 1 THEN COMMIT; END CASE', 'CASE ... END CASE'],
      ['WHILE 1 DO COMMIT; END WHILE', 'WHILE ... END WHILE'],
      ['REPEAT COMMIT; UNTIL 1 END REPEAT', 'REPEAT ... END REPEAT'],
      ['LOOP COMMIT; LEAVE l; END LOOP', 'LOOP ... END LOOP'],
      ['l: LOOP COMMIT; LEAVE l; END LOOP l', 'LOOP ... END LOOP'],
      ['l : WHILE 1 DO COMMIT; END WHILE', 'WHILE ... END WHILE'],
      ['FOR i IN 1..2 DO COMMIT; END FOR', 'FOR ... END FOR'],
      ['BEGIN NOT ATOMIC COMMIT; END', 'BEGIN NOT ATOMIC ... END'],
      ['b: BEGIN NOT ATOMIC SELECT 1; END b', 'BEGIN NOT ATOMIC ... END'],
      ['DECLARE x INT; BEGIN COMMIT; END', 'DECLARE ... BEGIN ... END'],
      ['<<l>> LOOP COMMIT; END LOOP', 'LOOP ... END LOOP'],
      ['SELECT 1; /* then */ IF 1 THEN COMMIT; END IF', 'IF ... END IF'],
    ]
    for (const [text, name] of refused) {
      expect(transactionControl(text, 'mysql'), text).toBe(`${name} (${compound})`)
    }
    // Functions named like the compound keywords, a variable, a label-like cast: not compounds.
    expect(transactionControl("SELECT IF(1, 'a', 'b'), REPEAT('x', 3)", 'mysql')).toBeUndefined()
    expect(transactionControl('SELECT CASE WHEN 1 THEN 2 END; SELECT 1', 'mysql')).toBeUndefined()
    expect(transactionControl('SET @x := 1; SELECT @x', 'mysql')).toBeUndefined()
    // CALL is not read (a procedure's body is not in the text): the store detects what it does.
    expect(transactionControl('CALL app_flush()', 'mysql')).toBeUndefined()
  })

  it("finds a SQLite trigger's body by its BEGIN, not by a name spelled begin", () => {
    const refused = [
      'CREATE TEMP TRIGGER tr AFTER UPDATE OF begin ON slots BEGIN SELECT 1; END; COMMIT; BEGIN',
      'CREATE TRIGGER tr AFTER UPDATE OF "begin", end ON slots BEGIN SELECT 1; END; COMMIT',
      'CREATE TRIGGER tr AFTER UPDATE OF case_, end ON slots BEGIN SELECT 1; END\n;COMMIT',
      'CREATE TRIGGER begin INSERT ON end BEGIN SELECT 1; END; COMMIT',
      'CREATE TRIGGER tr AFTER UPDATE ON begin FOR EACH ROW WHEN new.begin = 1 BEGIN SELECT 1; END; COMMIT',
      'CREATE TRIGGER tr AFTER UPDATE ON t WHEN new . begin = 1 BEGIN SELECT 1; END; COMMIT',
      'CREATE TRIGGER tr AFTER UPDATE ON t WHEN begin + (SELECT 1) BEGIN SELECT 1; END; COMMIT',
      'CREATE TRIGGER tr AFTER UPDATE ON t BEGIN UPDATE t SET end = 1; SELECT CASE WHEN end THEN 1 END; END; COMMIT',
      'CREATE TEMPORARY TRIGGER IF NOT EXISTS tr AFTER DELETE ON t BEGIN DELETE FROM u; END;COMMIT',
      'CREATE TRIGGER tr AFTER INSERT ON t BEGIN /* c */ INSERT INTO u VALUES (1); END; COMMIT',
      // A trigger with no body (a syntax error): what follows is read.
      'CREATE TRIGGER tr AFTER UPDATE OF begin ON slots; COMMIT',
    ]
    for (const text of refused) expect(transactionControl(text, 'sqlite'), text).toBe('COMMIT')
    expect(
      transactionControl(
        'CREATE TRIGGER tr AFTER UPDATE OF begin ON slots BEGIN SELECT 1; SELECT 2; END',
        'sqlite',
      ),
    ).toBeUndefined()
    expect(
      statementWords('CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END; SELECT 2', 'sqlite'),
    ).toEqual([
      ['CREATE', 'TRIGGER', 'TR', 'AFTER', 'INSERT', 'ON', 'T', 'BEGIN', 'SELECT', 'END'],
      ['SELECT'],
    ])
    // PostgreSQL's triggers have no body in the text: a column named begin opens nothing.
    expect(
      transactionControl(
        'CREATE TRIGGER tr AFTER UPDATE OF begin ON t FOR EACH ROW EXECUTE FUNCTION f(); COMMIT',
        'postgres',
      ),
    ).toBe('COMMIT')
  })
})

describe('transactionControl: quotes read the way the server may read them', () => {
  it("reads E'...' after an operator as an escape string on PostgreSQL (@@E'x\\' ' hides nothing)", () => {
    expect(
      transactionControl(
        "SELECT 'a' @@E'x\\' '; ROLLBACK; INSERT INTO t VALUES (1); SELECT ''",
        'postgres',
      ),
    ).toBe('ROLLBACK')
    // And a legitimate E-string after an operator is not a statement.
    expect(
      transactionControl("SELECT 'do not begin'::text @@E'don\\'t; begin' AS hit", 'postgres'),
    ).toBe(undefined)
  })

  it('reads a text with a backslash both ways: standard_conforming_strings off, NO_BACKSLASH_ESCAPES on', () => {
    expect(
      transactionControl(
        "SELECT 'x\\' '; ROLLBACK; INSERT INTO t VALUES (1); SELECT ''",
        'postgres',
      ),
    ).toBe('ROLLBACK')
    expect(
      transactionControl(
        "SELECT 'x\\'; ROLLBACK; START TRANSACTION READ WRITE; INSERT INTO t VALUES (1); COMMIT; SELECT '' AS y",
        'mysql',
      ),
    ).toBe('ROLLBACK')
    // A backslash that hides nothing either way stays allowed.
    expect(transactionControl("INSERT INTO t VALUES ('C:\\temp', 'it''s')", 'postgres')).toBe(
      undefined,
    )
  })

  it("reads SQLite's variables as one token, the Tcl form $a(...) included", () => {
    expect(
      transactionControl("SELECT $a(');ROLLBACK;INSERT INTO t VALUES (1);SELECT 'x'", 'sqlite'),
    ).toBe('ROLLBACK')
    expect(transactionControl('INSERT INTO t VALUES ($begin, @commit, :end)', 'sqlite')).toBe(
      undefined,
    )
  })
})

describe('transactionControl: session settings on PostgreSQL', () => {
  it('refuses a SET or RESET that outlives the transaction, and lets SET LOCAL, SET TRANSACTION and SET CONSTRAINTS through', () => {
    expect(transactionControl('SET search_path = app', 'postgres')).toBe('SET SEARCH_PATH')
    expect(transactionControl('set synchronous_commit to off', 'postgres')).toBe(
      'SET SYNCHRONOUS_COMMIT',
    )
    expect(transactionControl('SET SESSION statement_timeout = 0', 'postgres')).toBe(
      'SET SESSION STATEMENT_TIMEOUT',
    )
    expect(transactionControl('SELECT 1; RESET ALL', 'postgres')).toBe('RESET ALL')
    for (const allowed of [
      'SET LOCAL synchronous_commit = off',
      'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE',
      'SET CONSTRAINTS my_fk DEFERRED',
      "SELECT set_config('x.y', '1', true)",
    ]) {
      expect(transactionControl(allowed, 'postgres'), allowed).toBe(undefined)
    }
    // The other dialects read SET their own way (MySQL: autocommit; SQLite has none).
    expect(transactionControl('SET @x = 1', 'mysql')).toBe(undefined)
  })

  it('says why a session setting is refused, and what to write instead', () => {
    const error = refusedStatement('postgresStore', 'SET SEARCH_PATH') as Error & { code: string }
    expect(error.code).toBe('ERR_AW_TX_CONTROL')
    expect(error.message).toMatch(/outlive this delivery on a pooled connection.*SET LOCAL/)
  })
})

describe('the errors of ctx.tx', () => {
  it('name the statement, the code and what to do instead', () => {
    const refused = refusedStatement('mysqlStore', 'START TRANSACTION') as Error & { code: string }
    expect(refused.code).toBe('ERR_AW_TX_CONTROL')
    expect(refused.message).toMatch(/^mysqlStore: ctx\.tx refused START TRANSACTION/)
    expect(refused.message).toMatch(/savepoint/)
    const gone = transactionGone('sqliteStore', 'a conflict clause rolled it back') as Error & {
      code: string
    }
    expect(gone.code).toBe('ERR_AW_TX_GONE')
    expect(gone.message).toMatch(/a conflict clause rolled it back/)
  })
})
