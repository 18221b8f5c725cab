// Whether the client turns the event loop while an answer is due, chosen by measuring both ways
// (lib/awake.js): the round trips are handed in here, so the choice is checked without a clock.
import assert from "node:assert/strict"
import { test } from "node:test"

import { AwakeChoice, EXPLORE, SAMPLES } from "../lib/awake.js"

// `count` requests: what wait() gave each, each answered after `took(wait)` ms
function run(choice, count, took) {
  const waits = []
  for (let i = 0; i < count; i++) {
    const wait = choice.wait()
    waits.push(wait)
    choice.took(wait, took(wait))
  }
  return waits
}

test("the two ways take turns until each has its samples", () => {
  const choice = new AwakeChoice(1)
  const waits = run(choice, 2 * SAMPLES, () => 0.5)
  assert.deepEqual(waits, Array.from({ length: 2 * SAMPLES }, (_, i) => (i % 2 ? 0 : 1)))
})

test("the faster way is used, and the other is tried every EXPLORE-th request", () => {
  for (const [awake, asleep, chosen] of [[0.4, 0.6, 1], [0.8, 0.6, 0]]) {
    const choice = new AwakeChoice(1)
    run(choice, 2 * SAMPLES, (wait) => (wait ? awake : asleep))
    const waits = run(choice, 4 * EXPLORE, (wait) => (wait ? awake : asleep))
    const tried = waits.map((wait, i) => [wait, i]).filter(([wait]) => wait !== chosen).map(([, i]) => i + 1)
    assert.deepEqual(tried, [1, 2, 3, 4].map((n) => n * EXPLORE), `awake ${awake} ms, asleep ${asleep} ms`)
  }
})

test("a machine that changes is followed: the choice turns once the chosen way has become the slower", () => {
  const choice = new AwakeChoice(1)
  run(choice, 2 * SAMPLES, (wait) => (wait ? 0.4 : 0.6))
  assert.equal(choice.wait(), 1)
  // turning now takes the core's CPU: every awake round trip from here on is slow
  const waits = run(choice, 2 * SAMPLES, (wait) => (wait ? 0.9 : 0.6))
  assert.equal(waits.at(-1), 0)
  assert.ok(waits.filter((wait) => wait === 1).length <= (SAMPLES >> 1) + 2, waits.join(" "))
})

test("one slow round trip does not turn the choice: the median is compared", () => {
  const choice = new AwakeChoice(1)
  run(choice, 2 * SAMPLES, (wait) => (wait ? 0.4 : 0.6))
  choice.took(1, 50)
  assert.deepEqual(run(choice, EXPLORE - 2, (wait) => (wait ? 0.4 : 0.6)), Array(EXPLORE - 2).fill(1))
})

test("awakeMs 0 never turns", () => {
  assert.deepEqual(run(new AwakeChoice(0), 3 * SAMPLES, () => 0.1), Array(3 * SAMPLES).fill(0))
})
