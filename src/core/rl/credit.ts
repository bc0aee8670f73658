/**
 * How a training run assigns credit (section 12.2), as its job carries it and its config.json
 * records it under `credit`.
 */
import * as v from 'valibot';
import { bool, finite, int, oneOf, strict } from '../schema.js';

/** The advantage estimators a training run offers (section 12.2). */
export const ESTIMATORS = ['outcome', 'token', 'turn'] as const;
export type Estimator = (typeof ESTIMATORS)[number];

/**
 * How a training run assigns credit: `outcome` is GRPO's group advantage of the episode's reward;
 * `token` and `turn` are token- and turn-level GAE (gamma 1, lambda `lam`) over a critic's values.
 * `critic` trains a critic beside the policy (required by the GAE estimators; with `outcome` it only
 * lets the inspector show per-call values and TD errors). A critic is warmed up for `warmupSteps`
 * steps on base-agent episodes first (the chapter: 60) and saved in the run's checkpoints/critic.
 */
export const CreditSchema = v.pipe(
  strict({
    estimator: oneOf(ESTIMATORS),
    critic: bool(),
    lam: v.pipe(
      finite(),
      v.minValue(0, 'expected a number in [0, 1]'),
      v.maxValue(1, 'expected a number in [0, 1]'),
    ),
    warmupSteps: int(0, 1000),
  }),
  v.check(
    (c) => c.critic || c.estimator === 'outcome',
    'expected critic: true: the token- and turn-level GAE estimators need a critic',
  ),
);
export type Credit = v.InferOutput<typeof CreditSchema>;
