// Whether the client turns the event loop while an answer is due, chosen by measuring both ways
// (lib/awake.js): the round trips and the random draws are handed in here, so the choice is
// checked without a clock.
import assert from "node:assert/strict"
import { test } from "node:test"

import { AwakeChoice, EXPLORE, SAMPLES } from "../lib/awake.js"

// `count` requests: what wait() gave each, each answered after `took(wait, i)` ms
function run(choice, count, took) {
  const waits = []
  for (let i = 0; i < count; i++) {
    const wait = choice.wait()
    waits.push(wait)
    choice.took(wait, took(wait, i))
  }
  return waits
}
const draws = (values) => { let i = 0; return () => values[i++ % values.length] }
const never = () => 0.99 // a draw that never explores, and sends a tie asleep
const filled = (awake, asleep, random = never) => {
  const choice = new AwakeChoice(1, random)
  run(choice, 2 * SAMPLES, (wait) => (wait ? awake : asleep))
  return choice
}

test("the two ways share the first calls, each pair of them one way each, the order drawn", () => {
  for (const draw of [0.1, 0.9]) {
    const waits = run(new AwakeChoice(1, () => draw), 2 * SAMPLES, () => 0.5)
    const first = draw < 0.5 ? 1 : 0
    assert.deepEqual(waits, Array.from({ length: 2 * SAMPLES }, (_, i) => (i % 2 ? 1 - first : first)))
  }
})

test("calls that come in a pattern are not all sent one way: the order within each pair is drawn", () => {
  // a tool's before (fast) and its after (slow) in turn; the draws make the first pair awake-first
  // and the next asleep-first, so each way sees both kinds
  const choice = new AwakeChoice(1, draws([0.1, 0.9]))
  const seen = { 1: new Set(), 0: new Set() }
  run(choice, 2 * SAMPLES, (wait, i) => { seen[wait].add(i % 2 ? "after" : "before"); return i % 2 ? 2 : 0.5 })
  assert.deepEqual([...seen[1]].sort(), ["after", "before"])
  assert.deepEqual([...seen[0]].sort(), ["after", "before"])
})

test("the faster way is used, and the other is tried when the draw falls under 1/EXPLORE", () => {
  for (const [awake, asleep, chosen] of [[0.4, 0.6, 1], [0.8, 0.6, 0]]) {
    const values = Array.from({ length: 4 * EXPLORE }, (_, i) => (i % EXPLORE === 5 ? 0.5 / EXPLORE : 0.99))
    let source = never // while the first calls are shared; then the draws above
    const choice = filled(awake, asleep, () => source())
    source = draws(values)
    const waits = run(choice, 4 * EXPLORE, (wait) => (wait ? awake : asleep))
    const tried = waits.map((wait, i) => [wait, i]).filter(([wait]) => wait !== chosen).map(([, i]) => i)
    assert.deepEqual(tried, [5, 5 + EXPLORE, 5 + 2 * EXPLORE, 5 + 3 * EXPLORE], `awake ${awake} ms, asleep ${asleep} ms`)
  }
})

test("a machine that changes is followed: the choice turns once the chosen way has become the slower", () => {
  const choice = filled(0.4, 0.6)
  assert.equal(choice.wait(), 1)
  // turning now takes the core's CPU: every awake round trip from here on is slow
  const waits = run(choice, 2 * SAMPLES, (wait) => (wait ? 0.9 : 0.6))
  assert.equal(waits.at(-1), 0)
  assert.ok(waits.filter((wait) => wait === 1).length <= (SAMPLES >> 1) + 2, waits.join(" "))
})

test("one slow round trip does not turn the choice: the median is compared", () => {
  const choice = filled(0.4, 0.6)
  choice.took(1, 50)
  assert.deepEqual(run(choice, 3 * EXPLORE, (wait) => (wait ? 0.4 : 0.6)), Array(3 * EXPLORE).fill(1))
})

test("awakeMs 0 never turns", () => {
  assert.deepEqual(run(new AwakeChoice(0, () => 0), 3 * SAMPLES, () => 0.1), Array(3 * SAMPLES).fill(0))
})

test("with Math.random's draws the first calls are still shared evenly", () => {
  const choice = new AwakeChoice(1)
  const waits = run(choice, 2 * SAMPLES, () => 0.5)
  assert.equal(waits.filter((wait) => wait === 1).length, SAMPLES)
})
