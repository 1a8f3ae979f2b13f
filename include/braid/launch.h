/*
 * Braid extension: create a communicator from the environment of the launcher that
 * started the process, so that programs stop computing ranks, local ranks, master
 * addresses and ports by hand.
 *
 * Understood launchers: braidrun, torchrun / torch.distributed.launch (RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Slurm srun (SLURM_PROCID,
 * SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_NODELIST / SLURM_JOB_NODELIST, SLURM_JOB_ID),
 * Open MPI mpirun (OMPI_COMM_WORLD_*), MPICH / Hydra mpiexec (PMI_RANK, PMI_SIZE,
 * MPI_LOCALRANKID). Rank 0 creates the unique id and serves it at the rendezvous point
 * (TCP, or a shared file with BRAID_RENDEZVOUS=file:///path); the other ranks fetch it.
 * Which launcher was detected and every value derived from it appear in the INFO log.
 * See docs/launching.md.
 */
#ifndef BRAID_LAUNCH_H_
#define BRAID_LAUNCH_H_

#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct braidLaunchInfo {
  int rank;             /* rank in the job */
  int nranks;           /* number of ranks in the job */
  int localRank;        /* rank among this host's ranks, -1 when the launcher does not say */
  int localSize;        /* ranks on this host, 0 when the launcher does not say */
  char launcher[32];    /* "braidrun", "torchrun", "slurm", "openmpi", "mpich" or "env" */
  char rendezvous[512]; /* "tcp://host:port" or "file:///path" */
} braidLaunchInfo;

/* Reads the launcher's environment; no communication. */
ncclResult_t braidGetLaunchInfo(braidLaunchInfo* info);

/* Creates a communicator of all the job's ranks (collective over the job). `config` may be
 * NULL; `info` may be NULL, else it receives what braidGetLaunchInfo returns. */
ncclResult_t braidCommInitFromEnv(ncclComm_t* comm, ncclConfig_t* config, braidLaunchInfo* info);

#ifdef __cplusplus
}
#endif

#endif /* BRAID_LAUNCH_H_ */
