export declare const SAMPLES = 9;
export declare const EXPLORE = 16;
export declare class AwakeChoice {
    readonly awakeMs: number;
    private readonly asleep;
    private readonly awake;
    private asked;
    /** `awakeMs`: how long a request sent awake keeps the loop turning (0: never). */
    constructor(awakeMs: number);
    /** How long to keep the loop turning for the next request sent after a pause: awakeMs or 0. */
    wait(): number;
    /** How long a request sent with `wait` (what wait() gave) took to be answered, in ms. */
    took(wait: number, ms: number): void;
}
