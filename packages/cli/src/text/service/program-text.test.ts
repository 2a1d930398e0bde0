import type { Program } from '@affiliate-webhooks/client'
import { describe, expect, it } from 'vitest'
import {
  formatApplications,
  formatApplied,
  formatProgram,
  formatPrograms,
  payoutText,
} from './program-text.js'

describe('programs and applications', () => {
  const program: Program = {
    id: 40,
    merchantName: 'Shop',
    merchantDomain: 'shop.example.com',
    category: 'home_garden',
    payoutType: 'cps',
    payout: '7.00',
    payoutUnit: 'percent',
    currency: null,
    cookieDays: 30,
    approvalType: 'auto',
    status: 'not_applied',
    supportsDeepLinks: true,
    description: null,
    regions: [],
    logoUrl: null,
  }

  it('the payout as people read it', () => {
    expect(payoutText(program)).toBe('7.00%')
    expect(payoutText({ ...program, payoutUnit: 'fixed', payout: '31.50', currency: 'EUR' })).toBe(
      '31.50 EUR',
    )
    expect(payoutText({ ...program, payout: null })).toBe('-')
  })

  it('a program as rows, a list as a table, and none', () => {
    expect(formatProgram(program)).toContain('cookie       30 days')
    expect(formatProgram(program)).toContain('regions      -')
    expect(formatPrograms([program]).split('\n')[1]).toMatch(
      /^40 +Shop +home_garden +cps +7.00% +30d +auto/,
    )
    expect(formatPrograms([])).toBe('no programs match')
  })

  it('applications as a table, and what apply says first', () => {
    const application = {
      applicationId: 3,
      status: 'pending' as const,
      appliedAt: '2026-11-20T09:00:00Z',
      decidedAt: null,
      rejectionReason: null,
      merchantName: 'Shop',
      programId: 40,
      channelId: 7,
    }
    expect(formatApplications([application]).split('\n')[1]).toMatch(/^3 +40 +Shop +7 +pending/)
    expect(formatApplications([])).toMatch(/^no applications/)
    expect(formatApplied(application, 40, 7)).toBe(
      'pending: program 40 on channel 7 (application 3); the team reviews it',
    )
    expect(formatApplied({ ...application, status: 'approved' }, 40, 7)).toMatch(
      /^approved: .*minted now$/,
    )
  })
})
