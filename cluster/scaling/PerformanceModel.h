#pragma once
// How far a run should scale, from a few measured numbers — to set expectations before paying for
// nodes and to judge measured efficiency against.
//
// Data parallelism: every rank computes one local batch per step (fixed per-rank batch, "weak"
// scaling), then gradients are averaged with a ring allreduce, whose alpha-beta cost for p ranks and
// n bytes is
//     T_ring(p, n) = 2(p-1)·alpha + 2(p-1)/p · n/beta
// (reduce-scatter + all-gather, 2(p-1) messages of n/p bytes). On N nodes x G GPUs the allreduce is
// hierarchical: a ring inside each node (NVLink), then a ring across the nodes over the 1/G share
// each local GPU owns (InfiniBand), then the intra-node all-gather — modelled as
//     T = T_ring(G, n; intra) + T_ring(N, n/G; inter).
// A fraction `overlap` of the communication is hidden behind the backward pass (buckets are reduced
// while earlier layers still compute), at most the backward share of the compute time:
//     T_step(p) = compute + comm - min(overlap·comm, backwardShare·compute)
// Speed-up (throughput of p ranks over one) = p · T_step(1) / T_step(p); efficiency = T_step(1)/T_step(p).
//
// Experiment parallelism: T trials on W workers (or W/g groups of g ranks, each trial data-parallel
// inside its group), dynamic scheduling = list scheduling: each trial, in order, starts on the worker
// that becomes free first. A trial costs startup + dataLoad + read(c) + duration / groupSpeedup(g),
// where read(c) is the data a trial reads from a file system shared by the c trials running at once
// (SharedRead: the concurrent readers of one node divide its client bandwidth).
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/scaling/ModelInput.h"

namespace medseg::cluster {

struct LinkCost {
  double alphaSeconds;      // latency per message
  double bytesPerSecond;    // bandwidth
};

// NVLink (intra-node) and InfiniBand EDR (inter-node) defaults: assumptions, not measurements; their
// sources are in nvlinkAssumption() / infinibandEdrAssumption().
constexpr LinkCost kNvlinkDefault{2e-6, 150e9};
constexpr LinkCost kInfinibandEdrDefault{1.5e-6, 12e9};

// A link's cost as a named model input: what it is, where the numbers come from, measured or assumed.
struct LinkInput {
  std::string name;    // "intra_node" | "inter_node"
  LinkCost cost;
  std::string source;
  bool measured = false;
  // alpha and beta as two ModelInputs (name.alpha_seconds, name.bytes_per_second).
  std::vector<ModelInput> inputs() const;
};
LinkInput nvlinkAssumption();
LinkInput infinibandEdrAssumption();

double ringAllreduceSeconds(int ranks, double bytes, const LinkCost& link);
double hierarchicalAllreduceSeconds(int nodes, int gpusPerNode, double bytes, const LinkCost& intra, const LinkCost& inter);

struct DataParallelModel {
  double computeSecondsPerStep = 0.0;  // measured on one rank: forward + backward + update
  double modelBytes = 0.0;             // gradient bytes reduced per step (parameters x 4 for float32)
  double overlap = 0.0;                // share of communication that can hide behind backward, 0..1
  double backwardShare = 2.0 / 3.0;    // backward's share of the compute time
  LinkCost intraNode = kNvlinkDefault;
  LinkCost interNode = kInfinibandEdrDefault;
  // A rank's compute when all ranks of its node run at once, over its compute alone: what the ranks
  // lose to each other on a shared machine (memory bandwidth, caches, clock). Measured where the
  // ranks ran (cluster/scaling/MachineCeiling.h); 1 for sizes beyond the machine measured.
  double computeSlowdownAtOnce = 1.0;
};

struct DataParallelPrediction {
  int nodes = 1, gpusPerNode = 1, ranks = 1;
  double communicationSeconds = 0.0;   // allreduce per step
  double exposedCommunicationSeconds = 0.0;
  double stepSeconds = 0.0;
  double speedup = 1.0;
  double efficiency = 1.0;
};

DataParallelPrediction predictDataParallel(const DataParallelModel& model, int nodes, int gpusPerNode);

// Data every trial reads from a file system its node shares with the node's other trials: one client
// per node (a GPFS daemon, an NFS mount) whose bandwidth the node's concurrent readers divide.
struct SharedRead {
  double bytes = 0.0;                    // one read of the data set
  double readsPerTrial = 1.0;            // 1: loaded once; epochs: re-read every epoch
  double nodeBytesPerSecond = 0.0;       // one node's client, alone or shared
  int trialsPerNode = 1;                 // at most this many trials of a node read at once (its GPUs)
  // Seconds one trial spends reading while `concurrent` trials of the search run (packed by node).
  double secondsPerTrial(int concurrent) const;
};

struct ExperimentParallelModel {
  std::vector<double> trialSeconds;    // compute time of each trial on one rank, in dispatch order
  double startupSeconds = 0.0;         // per trial: process/network start, first-step warm-up
  double workerStartSeconds = 0.0;     // per worker, once: its trial process's start before its first trial
  double dataLoadSeconds = 0.0;        // per trial: loading and preprocessing the data set (no contention)
  SharedRead sharedRead;               // per trial, contended (bytes 0: none)
  // A trial's time when trials run side by side, over its time alone (MachineCeiling: the machine's
  // own contention); applies to every worker count above 1.
  double slowdownAtOnce = 1.0;
  int groupSize = 1;                   // ranks per trial
  DataParallelModel groupModel;        // how a trial scales inside its group (used when groupSize > 1)
};

struct ExperimentParallelPrediction {
  int workers = 1, groups = 1;
  double makespanSeconds = 0.0;
  double serialSeconds = 0.0;          // the same trials on one worker
  double speedup = 1.0;
  double efficiency = 1.0;             // speedup / workers
};

// Makespan of list scheduling: each duration, in order, goes to the earliest-free of `machines`.
double listScheduleMakespan(const std::vector<double>& durations, int machines);
ExperimentParallelPrediction predictExperimentParallel(const ExperimentParallelModel& model, int workers);

}  // namespace medseg::cluster
