// Whether the client keeps the event loop turning while an answer is due (client.ts) is measured on
// the machine it runs on, not assumed. Where an idle CPU halts and the core runs on the other one,
// turning read the answer a quarter sooner after a pause; where the scheduler packs the plugin and
// the core onto one CPU, the turning takes the core's CPU and made the same call a quarter slower
// (benchmarks/opencode_bench.mjs runs both ways side by side). So the two ways share the first
// calls until each has SAMPLES round trips, the faster by median is used from then on, and one
// request in EXPLORE tries the other one, so that a machine whose load changes is followed.
// Which way a request takes is drawn at random where the two are even: OpenCode's calls come in
// patterns (a tool's before, then its after, which the effect check makes slower), and a strict
// alternation would give each way one kind of call.
export const SAMPLES = 9;
export const EXPLORE = 16;
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Infinity;
export class AwakeChoice {
    awakeMs;
    random;
    asleep = []; // the last round trips sent asleep, in ms
    awake = []; // and turning for awakeMs
    /** `awakeMs`: how long a request sent awake keeps the loop turning (0: never); `random`: a draw in
     * [0, 1), Math.random but in tests. */
    constructor(awakeMs, random = Math.random) {
        this.awakeMs = awakeMs;
        this.random = random;
    }
    /** How long to keep the loop turning for the next request sent after a pause: awakeMs or 0. */
    wait() {
        if (!(this.awakeMs > 0))
            return 0;
        const { asleep, awake } = this;
        if (asleep.length < SAMPLES || awake.length < SAMPLES) {
            const awakeNext = awake.length === asleep.length ? this.random() < 0.5 : awake.length < asleep.length;
            return awakeNext ? this.awakeMs : 0;
        }
        const awakeIsFaster = median(awake) < median(asleep);
        const other = this.random() < 1 / EXPLORE;
        return awakeIsFaster !== other ? this.awakeMs : 0;
    }
    /** How long a request sent with `wait` (what wait() gave) took to be answered, in ms. */
    took(wait, ms) {
        const times = wait > 0 ? this.awake : this.asleep;
        times.push(ms);
        if (times.length > SAMPLES)
            times.shift();
    }
}
