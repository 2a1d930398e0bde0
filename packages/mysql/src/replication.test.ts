import { describe, expect, it } from 'vitest'
import {
  acknowledged,
  canAcknowledge,
  type ReplicationFacts,
  readReplicationFacts,
  replicationVerdict,
  replicationWarning,
  semiSyncStatusOf,
} from './replication.js'

const facts = (over: Partial<ReplicationFacts>): ReplicationFacts => ({
  binaryLog: true,
  semiSyncEnabled: false,
  spelling: 'master',
  semiSyncClients: 0,
  replicas: 0,
  ...over,
})

describe('replicationVerdict and its warning', () => {
  it('says nothing of a standalone server: no binary log, or no replica streaming', () => {
    for (const f of [facts({ binaryLog: false, replicas: undefined }), facts({ replicas: 0 })]) {
      expect(replicationVerdict(f)).toBe('standalone')
      expect(replicationWarning(f, 'mysqlStore', 5000)).toBeUndefined()
    }
  })

  it('warns of asynchronous replicas, naming the settings in the server’s own spelling', () => {
    const maria = replicationWarning(facts({ replicas: 2 }), 'mysqlStore', 5000)
    expect(maria).toMatch(
      /^mysqlStore: the database is a primary whose 2 replica\(s\) are asynchronous/,
    )
    expect(maria).toContain('rpl_semi_sync_slave_enabled = ON')
    expect(maria).toContain('rpl_semi_sync_master_wait_point = AFTER_SYNC')
    expect(maria).toContain("above the store's 5000 ms bound")
    const mysql8 = replicationWarning(
      facts({ replicas: 1, spelling: 'source', semiSyncEnabled: undefined }),
      'prismaStore',
      5000,
    )
    expect(mysql8).toContain('semi-synchronous replication is not installed')
    expect(mysql8).toContain('rpl_semi_sync_source_enabled = ON')
    expect(mysql8).toContain('rpl_semi_sync_replica_enabled = ON')
  })

  it('checks a semi-sync primary with a replica, warns when no replica acknowledges', () => {
    expect(replicationVerdict(facts({ semiSyncEnabled: true, semiSyncClients: 1 }))).toBe(
      'semi-sync',
    )
    expect(
      replicationWarning(facts({ semiSyncEnabled: true, semiSyncClients: 1 }), 'mysqlStore', 5000),
    ).toBeUndefined()
    expect(
      replicationWarning(facts({ semiSyncEnabled: true, semiSyncClients: 0 }), 'mysqlStore', 5000),
    ).toMatch(/every delivery is answered 503 until one does/)
  })

  it('says what it could not check when the role may not list the replicas', () => {
    const line = replicationWarning(facts({ replicas: undefined }), 'mysqlStore', 5000)
    expect(line).toMatch(/could not tell whether the database has replicas/)
  })
})

describe('a commit acknowledged by a replica', () => {
  const on = { enabled: true, on: true, clients: 1, notAcknowledged: 4, turnedOff: 1 }

  it('needs semi-sync on with a replica before, on after, and no unacknowledged commit between', () => {
    expect(canAcknowledge(on)).toBe(true)
    expect(acknowledged(on, on)).toBe(true)
    expect(acknowledged(on, { ...on, notAcknowledged: 5 })).toBe(false)
    expect(acknowledged(on, { ...on, on: false })).toBe(false)
    expect(canAcknowledge({ ...on, clients: 0 })).toBe(false)
    expect(acknowledged({ ...on, on: false }, on)).toBe(false)
    // Turned off and on again in between (SET GLOBAL counts no commit unacknowledged).
    expect(acknowledged(on, { ...on, turnedOff: 2 })).toBe(false)
    // Enabled before, not after: the commit may not have waited.
    expect(acknowledged(on, { ...on, enabled: false })).toBe(false)
    expect(canAcknowledge({ ...on, enabled: false })).toBe(false)
  })

  it('reads the status rows whatever the case of their names', () => {
    expect(
      semiSyncStatusOf([
        { name: 'RPL_SEMI_SYNC_MASTER_STATUS', value: 'ON' },
        { name: 'RPL_SEMI_SYNC_MASTER_CLIENTS', value: '2' },
        { name: 'RPL_SEMI_SYNC_MASTER_NO_TX', value: '7' },
        { name: 'RPL_SEMI_SYNC_MASTER_NO_TIMES', value: '3' },
        { name: 'RPL_SEMI_SYNC_MASTER_ENABLED', value: 'ON' },
      ]),
    ).toEqual({ enabled: true, on: true, clients: 2, notAcknowledged: 7, turnedOff: 3 })
    expect(semiSyncStatusOf([])).toEqual({
      enabled: false,
      on: false,
      clients: 0,
      notAcknowledged: 0,
      turnedOff: 0,
    })
  })
})

describe('readReplicationFacts', () => {
  const variables = [
    { Variable_name: 'log_bin', Value: 'ON' },
    { Variable_name: 'rpl_semi_sync_master_enabled', Value: 'OFF' },
  ]

  it('tries each spelling of SHOW REPLICA HOSTS, and takes a refusal as unknown', async () => {
    const asked: string[] = []
    const run = (refuse: number) => async (sql: string) => {
      asked.push(sql)
      if (sql.startsWith('SHOW GLOBAL VARIABLES')) return variables as never[]
      if (sql.startsWith('SELECT VERSION')) return [{ v: '10.11.9-MariaDB' }] as never[]
      if (sql === 'SHOW REPLICA HOSTS') throw Object.assign(new Error('syntax'), { errno: 1064 })
      if (sql === 'SHOW REPLICAS') throw Object.assign(new Error('refused'), { errno: refuse })
      return [{ name: 'Rpl_semi_sync_master_clients', value: '0' }] as never[]
    }
    const refused = await readReplicationFacts(run(1227))
    expect(refused.replicas).toBeUndefined()
    expect(asked).toContain('SHOW REPLICAS')
    expect(asked).not.toContain('SHOW SLAVE HOSTS')
    const older = await readReplicationFacts(run(1064))
    expect(older.replicas).toBe(1)
    expect(older.reader).toEqual({ spelling: 'master', schema: 'information_schema' })
  })
})
