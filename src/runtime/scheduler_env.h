// A job started by Slurm's `srun` or Open MPI's `mpirun` instead of
// `strata launch`: their variables, in torchrun's names, so that ProcessEnv
// reads every job alike.
//
// Slurm: SLURM_PROCID -> RANK, SLURM_NTASKS -> WORLD_SIZE, SLURM_LOCALID ->
// LOCAL_RANK; SLURM_TASKS_PER_NODE ("2(x3),1") gives every node's count, so
// LOCAL_WORLD_SIZE (this node's, by SLURM_NODEID) and STRATA_NODE_SIZES; the
// first host of SLURM_JOB_NODELIST ("node[01-04,07]") -> MASTER_ADDR; the port
// from MASTER_PORT if set, else derived from SLURM_JOB_ID (kJobPortBase +
// id % kJobPortSpan), the same on every task of the job.
// Open MPI: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE; MASTER_ADDR
// as exported to the ranks (`mpirun -x MASTER_ADDR=...`), which may be left
// out only when every rank runs on this host; the port from MASTER_PORT if
// set, else derived alike from the job's id (OMPI_MCA_ess_base_jobid, or a
// hash of PMIX_NAMESPACE), so two jobs on one host do not collide.
//
// A process that has RANK (started by `strata launch` or torchrun) is read as
// it is. Nothing blocks; malformed variables throw ConfigError naming them.
#pragma once

#include <string>
#include <vector>

#include "strata/runtime/process_env.h"

namespace strata {

constexpr int kJobPortBase = 20000;
constexpr int kJobPortSpan = 40000;

ProcessEnv::Lookup withSchedulerVariables(const ProcessEnv::Lookup& lookup);

// "node[01-04,07],login1" -> node01 node02 node03 node04 node07 login1.
std::vector<std::string> expandHostList(const std::string& list);
// "2(x3),1" -> 2 2 2 1.
std::vector<int> expandTasksPerNode(const std::string& text);

}  // namespace strata
