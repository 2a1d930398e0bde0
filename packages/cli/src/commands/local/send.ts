import { CONVERSION_STATUSES } from '@affiliate-webhooks/core'
import { ANSWER_TIMEOUT_MS, MAX_ATTEMPTS } from '@affiliate-webhooks/emulator'
import { SAMPLE_EVENT_TYPES } from '@affiliate-webhooks/emulator/internal'
import { COMMON, defineCommand, flag } from '../../framework/command.js'

export const send = defineCommand({
  usage: [
    `send --url URL [--type TYPE] [--status STATUS] [--conversion-id N]
                               [--created-at ISO] [--body FILE] [--secret SECRET] [--attempt N] [--json]`,
    'send --from FILE [--url] URL [--resign --secret SECRET]',
  ],
  about: `Sends one delivery exactly as the service does: POST, Content-Type, Service-Event-Id,
Service-Delivery-Attempt and a fresh Service-Signature. Prints the status and answer.
A 2xx within the timeout is a success; anything else (non-2xx, redirect, timeout,
connection error) is a failure, as the service counts it.`,
  options: {
    url: flag.text('URL', "the receiver's webhook URL (required)"),
    type: flag.text(
      'TYPE',
      `${SAMPLE_EVENT_TYPES.join(', ').replace(/, (?=[^,]*$)/, ' or ')}\n(default: conversion.created, or .updated when --status is not pending)`,
    ),
    status: flag.text(
      'STATUS',
      `the conversion's status, one of\n${CONVERSION_STATUSES.join(', ')}`,
    ),
    'conversion-id': flag.number('N', "the conversion's id (default random)", {
      min: 1,
      integer: true,
    }),
    body: flag.text('FILE', 'send this exact body instead ("-" reads stdin)'),
    ...COMMON,
    attempt: flag.number('N', 'Service-Delivery-Attempt, 1 to 8 (default 1)', {
      min: 1,
      max: MAX_ATTEMPTS,
      integer: true,
    }),
    timestamp: flag.number(
      'UNIX',
      'sign as of this Unix time (default now), to test clock checks',
      { min: 0, integer: true },
    ),
    'created-at': flag.text(
      'ISO',
      "the event's createdAt (default now), to reproduce out-of-order\narrivals: an update created earlier than one handled is stale",
    ),
    timeout: flag.number(
      'MS',
      `how long to wait for the answer (default ${ANSWER_TIMEOUT_MS}, the service's limit)`,
      { min: 1 },
    ),
    from: flag.text(
      'FILE',
      're-send a delivery saved by listen --save: its headers and\nexact body, original signature included (a receiver refuses\nit once the signature is over 5 minutes old: add --resign)',
    ),
    resign: flag.bool('with --from: sign again now with --secret (same body and event id)'),
    json: flag.bool('print the attempt as JSON'),
  },
  footer: `Examples:
  affiliate-webhooks send --url http://localhost:3000/hooks --status approved --conversion-id 1001
  affiliate-webhooks send --url http://localhost:3000/hooks --type webhook.test
  affiliate-webhooks send --from captures/20261123T091500-123Z-evt_ab12-1.json http://localhost:3000/hooks

Exit codes: 0 answered 2xx, 1 any other outcome, 2 wrong usage.`,
  positionals: true,
})
