import { Redis } from 'ioredis'
import { Redis as Redis5 } from 'ioredis5'
import { describe, expect, it } from 'vitest'
import { clientFor, jobIdFor } from './connection.js'

describe('clientFor', () => {
  it('uses a client it is given, from ioredis 6 or 5, and never closes it', () => {
    for (const client of [new Redis({ lazyConnect: true }), new Redis5({ lazyConnect: true })]) {
      expect(clientFor(client as Redis, 'worker')).toEqual({ client, owned: false })
      client.disconnect()
    }
  })

  it('makes a fail-fast producer client and a worker client with maxRetriesPerRequest null', () => {
    const producer = clientFor({ lazyConnect: true }, 'producer')
    const worker = clientFor({ lazyConnect: true, maxRetriesPerRequest: 3 }, 'worker')
    expect(producer.owned).toBe(true)
    expect((producer.client as Redis).options).toMatchObject({ enableOfflineQueue: false })
    expect((worker.client as Redis).options.maxRetriesPerRequest).toBeNull()
    producer.client.disconnect()
    worker.client.disconnect()
  })
})

describe('jobIdFor', () => {
  it('keeps an evt_ id as it is', () => {
    expect(jobIdFor('evt_01JABCDEF')).toBe('evt_01JABCDEF')
  })

  it('escapes : (which BullMQ refuses in a job id) one to one, so two ids never meet', () => {
    expect(jobIdFor('evt_a:b')).toBe('evt_a%3Ab')
    expect(jobIdFor('evt_a%3Ab')).toBe('evt_a%253Ab')
    expect(jobIdFor('evt_a:b')).not.toContain(':')
    expect(jobIdFor('evt_a:b')).not.toBe(jobIdFor('evt_a%3Ab'))
  })
})
