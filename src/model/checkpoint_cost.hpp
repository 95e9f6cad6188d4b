// What checkpointing costs a training job: the checkpoint interval of Young (1974) and Daly (2006)
// and the fraction of wall time left for useful work under exponentially distributed failures
// (Daly's model). Pure arithmetic, seconds throughout; docs/model.md, "What checkpoints cost a job".
#pragma once

namespace ccbench::model {

// Young's first-order optimum: sqrt(2 delta M). delta = the time training stops for one checkpoint,
// M = the job's mean time between failures. Both > 0.
double young_interval_s(double delta_s, double mtbf_s);

// Daly's higher-order estimate: sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta
// for delta < 2M, else M.
double daly_interval_s(double delta_s, double mtbf_s);

// Where a job's wall time goes at compute interval tau between checkpoints (all fractions of wall
// time; they sum to 1).
struct JobCost {
  double segment_wall_s = 0;       // expected wall time to finish one tau of work plus its checkpoint
  double goodput = 0;              // tau / segment_wall_s
  double checkpoint_fraction = 0;  // delta / segment_wall_s: the checkpoints that completed
  double restart_fraction = 0;     // expected failures per segment x restart_s / segment_wall_s
  double rework_fraction = 0;      // the rest: work (and checkpoints) lost to failures, redone
};

// Daly's expected wall time for a segment under exponential failures with mean M, restart R:
// M e^(R/M) (e^((tau + delta)/M) - 1). Failures per segment (e^((tau+delta)/M) - 1) split the loss
// into restarts and rework (first order in R/M: a failure during a restart is counted as rework).
// Throws std::invalid_argument for tau, M <= 0 or delta, R < 0 or a value that is not finite.
JobCost job_cost(double tau_s, double delta_s, double restart_s, double mtbf_s);

}  // namespace ccbench::model
