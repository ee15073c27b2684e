import { ibanChecksumValid } from '../../../shared/pii/detect-iban.ts'
import type { PresidioSample } from './evaluate-pii-dataset.ts'
import { digits, hex, int, pad, pick, type Rng, seededRng } from './seeded-rng.ts'

/**
 * A second corpus, written for this project and not derived from presidio-research's
 * templates: seeded (mulberry32), so every run gives the same samples. Positives carry
 * one labelled value of a claimed entity in our own sentences; decoys carry none and are
 * the look-alikes a code-heavy prompt is full of (versions, semver, dates, IBAN- and
 * card-shaped strings with bad checksums, order numbers, hashes, UUIDs, timestamps).
 * Each sample's `kind` says which generator made it, so the report can break decoys down.
 */
export interface GeneratedSample extends PresidioSample {
  kind: string
}

/** Luhn check digit for `body`, so body + digit passes. */
function luhnDigit(body: string): number {
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    let d = Number(body.charAt(body.length - 1 - i))
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return (10 - (sum % 10)) % 10
}

/** Issuer prefixes and lengths of real schemes (the detector's IIN table has more). */
const cardSchemes = [
  { prefix: '4', length: 16 },
  { prefix: '51', length: 16 },
  { prefix: '2221', length: 16 },
  { prefix: '34', length: 15 },
  { prefix: '37', length: 15 },
  { prefix: '6011', length: 16 },
  { prefix: '3530', length: 16 },
] as const

function cardNumber(rng: Rng, valid: boolean): string {
  const scheme = pick(rng, cardSchemes)
  const body = scheme.prefix + digits(rng, scheme.length - scheme.prefix.length - 1)
  const check = luhnDigit(body)
  return body + String(valid ? check : (check + int(rng, 1, 9)) % 10)
}

function groupCard(rng: Rng, number: string): string {
  const style = int(rng, 0, 2)
  if (style === 0) return number
  const sep = style === 1 ? ' ' : '-'
  if (number.length === 15)
    return [number.slice(0, 4), number.slice(4, 10), number.slice(10)].join(sep)
  return number.match(/.{1,4}/g)?.join(sep) ?? number
}

const ibanCountries = [
  ['DE', 18],
  ['GB', 18],
  ['FR', 23],
  ['NL', 14],
  ['BE', 12],
  ['ES', 20],
  ['IT', 23],
  ['CH', 17],
  ['AT', 16],
  ['NO', 11],
] as const

/** A BBAN of digits (GB and NL carry a four-letter bank code), check digits computed. */
function iban(rng: Rng, valid: boolean): string {
  const [country, bbanLength] = pick(rng, ibanCountries)
  const bank =
    country === 'GB' || country === 'NL' ? pick(rng, ['WEST', 'ABNA', 'INGB', 'BARC']) : ''
  const bban = bank + digits(rng, bbanLength - bank.length)
  for (let check = 2; check <= 98; check++) {
    const candidate = `${country}${pad(check, 2)}${bban}`
    if (ibanChecksumValid(candidate) === valid) return candidate
  }
  return `${country}00${bban}`
}

const groupIban = (rng: Rng, value: string) =>
  rng() < 0.5 ? value : (value.match(/.{1,4}/g)?.join(' ') ?? value)

function phone(rng: Rng): string {
  const area = int(rng, 201, 989)
  const exchange = int(rng, 200, 989)
  const line = pad(int(rng, 0, 9999), 4)
  return pick(rng, [
    `(${area}) ${exchange}-${line}`,
    `${area}-${exchange}-${line}`,
    `${area}.${exchange}.${line}`,
    `+1 ${area} ${exchange} ${line}`,
    `+44 20 ${int(rng, 7000, 8999)} ${line}`,
    `020 ${int(rng, 7000, 8999)} ${line}`,
    `07${digits(rng, 3)} ${digits(rng, 6)}`,
    `+33 ${int(rng, 1, 9)} ${digits(rng, 2)} ${digits(rng, 2)} ${digits(rng, 2)} ${digits(rng, 2)}`,
    `0${int(rng, 1, 9)}.${digits(rng, 2)}.${digits(rng, 2)}.${digits(rng, 2)}.${digits(rng, 2)}`,
    `+49 30 ${digits(rng, 7)}`,
    `030 ${digits(rng, 7)}`,
    `+91 9${digits(rng, 4)} ${digits(rng, 5)}`,
    `+31 6 ${digits(rng, 8)}`,
  ])
}

function ssn(rng: Rng): string {
  return `${pad(int(rng, 1, 665), 3)}-${pad(int(rng, 1, 99), 2)}-${pad(int(rng, 1, 9999), 4)}`
}

const positiveTemplates: readonly [string, string, (rng: Rng) => string, readonly string[]][] = [
  [
    'card',
    'CREDIT_CARD',
    (rng) => groupCard(rng, cardNumber(rng, true)),
    [
      'Charge the order to {} please.',
      'The customer paid with {} yesterday.',
      'Number on the back of the receipt: {}',
    ],
  ],
  [
    'iban',
    'IBAN_CODE',
    (rng) => groupIban(rng, iban(rng, true)),
    [
      'Refund to account {} by Friday.',
      'Our supplier changed bank details to {}.',
      'Transfer {} EUR? No: the account is {}.',
    ],
  ],
  [
    'phone',
    'PHONE_NUMBER',
    phone,
    [
      'Reach Sam on {} after lunch.',
      'If the build fails again ring {} and ask for ops.',
      'Contact: {}',
    ],
  ],
  [
    'email',
    'EMAIL_ADDRESS',
    (rng) =>
      `${pick(rng, ['sam', 'a.lee', 'ops-team', 'j_doe'])}${int(rng, 1, 99)}@${pick(rng, ['example.com', 'corp.example.org', 'mail.example.co.uk'])}`,
    ['Send the report to {} when done.', 'From: {}\nSubject: release notes'],
  ],
  ['ssn', 'US_SSN', ssn, ['Applicant SSN {} on the form.', 'Her social security number is {}.']],
  [
    'ip',
    'IP_ADDRESS',
    (rng) => `${int(rng, 11, 223)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`,
    ['Block traffic from {} at the firewall.', 'ssh admin@host failed from {} twice'],
  ],
]

function positive(rng: Rng): GeneratedSample {
  const [kind, entity, value, templates] = pick(rng, positiveTemplates)
  const template = pick(rng, templates).replace('{} EUR', `${int(rng, 10, 999)} EUR`)
  const v = value(rng)
  const start = template.indexOf('{}')
  const full_text = template.replace('{}', v)
  return {
    kind,
    full_text,
    spans: [
      {
        entity_type: entity,
        entity_value: v,
        start_position: start,
        end_position: start + v.length,
      },
    ],
  }
}

const version = (rng: Rng) =>
  `${int(rng, 0, 30)}.${int(rng, 0, 99)}.${int(rng, 0, rng() < 0.5 ? 999 : 9999)}`
const date = (rng: Rng) => {
  const [y, m, d] = [int(rng, 1990, 2030), pad(int(rng, 1, 12), 2), pad(int(rng, 1, 28), 2)]
  return pick(rng, [
    `${y}-${m}-${d}`,
    `${d}.${m}.${y}`,
    `${m}/${d}/${y}`,
    `${y}/${m}/${d}`,
    `${d}-${m}-${y}`,
  ])
}
const time = (rng: Rng) =>
  `${pad(int(rng, 0, 23), 2)}:${pad(int(rng, 0, 59), 2)}:${pad(int(rng, 0, 59), 2)}`

const decoys: readonly [string, (rng: Rng) => string][] = [
  [
    'version',
    (rng) =>
      pick(rng, [
        'upgrade to {}',
        'release {}',
        'fixed in {} and later',
        '"version": "{}",',
        'pip install torch=={}',
        'kernel {}-generic',
        // Chrome's own shape, major.0.build.patch: "x.y.z.0" would be a valid IPv4 address.
        `Chrome/${int(rng, 90, 140)}.0.${int(rng, 4000, 7999)}.${int(rng, 10, 250)} Safari`,
      ]).replace('{}', version(rng)),
  ],
  [
    'semver',
    (rng) =>
      pick(rng, [
        'npm i react@{}',
        'v{} is out',
        'tag {}-rc.{}',
        'image: nginx:{}',
        'bump from {} to {}',
      ]).replaceAll('{}', () => version(rng)),
  ],
  [
    'date',
    (rng) =>
      pick(rng, ['due {}', 'between {} and {}', 'born on {}?', 'Date: {}']).replaceAll('{}', () =>
        date(rng),
      ),
  ],
  [
    'timestamp',
    (rng) =>
      pick(rng, [
        `${date(rng)} ${time(rng)},${digits(rng, 3)} INFO started`,
        `${int(rng, 2000, 2030)}-${pad(int(rng, 1, 12), 2)}-${pad(int(rng, 1, 28), 2)}T${time(rng)}.${digits(rng, 3)}Z`,
        `ts=${int(rng, 1500000000, 1800000000)} level=warn`,
        `"created_at": ${int(rng, 1500000000, 1800000000)}${digits(rng, 3)},`,
      ]),
  ],
  [
    'iban-bad-check',
    (rng) =>
      pick(rng, ['Account {} on file.', 'IBAN: {}', 'to {} please']).replace(
        '{}',
        groupIban(rng, iban(rng, false)),
      ),
  ],
  [
    'card-bad-luhn',
    (rng) =>
      pick(rng, ['paid with {}', 'card {}', 'ref {}']).replace(
        '{}',
        groupCard(rng, cardNumber(rng, false)),
      ),
  ],
  [
    'order-number',
    (rng) =>
      pick(rng, [
        `order #${digits(rng, 3)}-${digits(rng, 4)}-${digits(rng, 3)}`,
        `Order ${int(rng, 10000000, 99999999)} shipped`,
        `invoice INV-${int(rng, 2000, 2030)}-${digits(rng, 6)}`,
        `tracking 1Z${hex(rng, 6).toUpperCase()}${digits(rng, 10)}`,
        `ticket ${digits(rng, 3)}-${digits(rng, 3)}-${digits(rng, 3)}`,
      ]),
  ],
  [
    'hash',
    (rng) =>
      pick(rng, [
        `commit ${hex(rng, 7)}`,
        `sha256:${hex(rng, 64)}`,
        `md5 ${hex(rng, 32)}`,
        `git checkout ${hex(rng, 40)}`,
      ]),
  ],
  [
    'uuid',
    (rng) => `id ${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-a${hex(rng, 3)}-${hex(rng, 12)}`,
  ],
]

/** `positives` samples with one labelled value and `perDecoy` of each decoy kind, shuffled by the seed only. */
export function generatePiiCorpus(seed = 15, positives = 600, perDecoy = 200): GeneratedSample[] {
  const rng = seededRng(seed)
  const samples: GeneratedSample[] = []
  for (let i = 0; i < positives; i++) samples.push(positive(rng))
  for (const [kind, make] of decoys) {
    for (let i = 0; i < perDecoy; i++) samples.push({ kind, full_text: make(rng), spans: [] })
  }
  return samples
}
