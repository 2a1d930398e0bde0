/**
 * Microseconds since the epoch for an ISO 8601 time with a zone,
 * `YYYY-MM-DD(T|t| )HH:MM[:SS[.fraction]](Z|z|±HH[:MM]|±HHMM)`, or NaN for
 * anything else, including impossible dates. Microseconds, because two events of
 * one conversion may be stamped within the same millisecond and must still order.
 * Reads character codes instead of using a regex and Date.parse, and counts days
 * by arithmetic instead of Date.UTC: it runs on every delivery.
 */
export function isoTimeMicros(text: unknown): number {
  if (typeof text !== 'string') return Number.NaN
  const length = text.length
  if (length < 17 || length > 40) return Number.NaN
  const century = twoDigits(text, 0)
  const yearOfCentury = twoDigits(text, 2)
  const year = century < 0 || yearOfCentury < 0 ? -1 : century * 100 + yearOfCentury
  const month = twoDigits(text, 5)
  const day = twoDigits(text, 8)
  const hour = twoDigits(text, 11)
  const minute = twoDigits(text, 14)
  const separator = text.charCodeAt(10)
  if (
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    (separator !== 84 /* T */ && separator !== 116 /* t */ && separator !== 32) ||
    text.charCodeAt(13) !== 58 ||
    !(year >= 1000) ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysIn(year, month) ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59
  ) {
    return Number.NaN
  }
  let at = 16
  let second = 0
  let micros = 0
  if (text.charCodeAt(at) === 58 /* : */) {
    second = twoDigits(text, 17)
    if (second < 0 || second > 59) return Number.NaN
    at = 19
    if (text.charCodeAt(at) === 46 /* . */) {
      const from = ++at
      while (at < length && isDigit(text.charCodeAt(at))) at++
      const count = at - from
      if (count === 0 || count > 9) return Number.NaN
      const kept = Math.min(count, 6)
      micros = digits(text, from, kept) * (MICROS_PER_UNIT[kept] as number)
    }
  }
  let offsetMinutes = 0
  const zone = text.charCodeAt(at)
  if ((zone === 90 /* Z */ || zone === 122) /* z */ && at + 1 === length) {
    offsetMinutes = 0
  } else if (zone === 43 /* + */ || zone === 45 /* - */) {
    const zoneHours = twoDigits(text, at + 1)
    const rest = length - (at + 3)
    const colon = text.charCodeAt(at + 3) === 58 ? 1 : 0
    const zoneMinutes = rest === 0 ? 0 : twoDigits(text, at + 3 + colon)
    if (
      (rest !== 0 && rest !== 2 + colon) ||
      zoneHours < 0 ||
      zoneHours > 23 ||
      zoneMinutes < 0 ||
      zoneMinutes > 59
    ) {
      return Number.NaN
    }
    offsetMinutes = (zone === 43 ? 1 : -1) * (zoneHours * 60 + zoneMinutes)
  } else {
    return Number.NaN
  }
  const minutes = (daysSinceEpoch(year, month, day) * 24 + hour) * 60 + minute - offsetMinutes
  return (minutes * 60 + second) * 1_000_000 + micros
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar, by
 * arithmetic (what Date.UTC computes, at a fraction of its cost): years counted
 * from March, so the leap day ends the year, in 400-year eras of 146,097 days.
 */
function daysSinceEpoch(year: number, month: number, day: number): number {
  // Every quantity here is a whole number >= 0 (years from 1000 on), so `| 0`
  // is the floor of the division, in integer arithmetic.
  const y = month <= 2 ? year - 1 : year
  const era = (y / 400) | 0
  const yearOfEra = y - era * 400
  const dayOfYear = (((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) | 0) + day - 1
  const dayOfEra = yearOfEra * 365 + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/** Microseconds in one unit of the last of `n` fraction digits (a table: `10 ** x` is a slow call here). */
const MICROS_PER_UNIT = [0, 100_000, 10_000, 1000, 100, 10, 1] as const

const isDigit = (code: number) => code >= 48 && code <= 57

/** The number written by the two digits at `at`, or -1; straight-line, no loop. */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at) - 48
  const ones = text.charCodeAt(at + 1) - 48
  // Past the end charCodeAt gives NaN, which fails these tests too.
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1
}

/** The number written by `count` digits at `at`, or -1. */
function digits(text: string, at: number, count: number): number {
  let value = 0
  for (let i = at; i < at + count; i++) {
    const code = text.charCodeAt(i)
    if (!isDigit(code)) return -1
    value = value * 10 + code - 48
  }
  return value
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}
