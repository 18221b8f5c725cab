export declare const SAMPLES = 9;
export declare const EXPLORE = 16;
export declare class AwakeChoice {
    readonly awakeMs: number;
    private readonly random;
    private readonly asleep;
    private readonly awake;
    /** `awakeMs`: how long a request sent awake keeps the loop turning (0: never); `random`: a draw in
     * [0, 1), Math.random but in tests. */
    constructor(awakeMs: number, random?: () => number);
    /** How long to keep the loop turning for the next request sent after a pause: awakeMs or 0. */
    wait(): number;
    /** How long a request sent with `wait` (what wait() gave) took to be answered, in ms. */
    took(wait: number, ms: number): void;
}
