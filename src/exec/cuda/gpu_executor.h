// GPU mode's executor: turns a communicator's planned work into kernel launches on the
// user's streams, and watches what it launched.
//
//  - Launch. One kernel per collective (one block per channel: the schedules, primitives
//    and functors host mode runs, compiled for the GPU), one kernel for a group's
//    point-to-point transfers, a copy or a small kernel for one-rank communicators. A call
//    returns once its work is enqueued.
//  - Order. A communicator's kernels never run side by side (they share connections and
//    step counters): a batch waits for the communicator's previous batch when that one went
//    to another stream. A group that used several streams of one communicator launches on
//    the first after it waited for the others, and the others wait for the launch, as NCCL
//    does. Inside a CUDA graph capture only the capture's own order applies.
//  - Watch. A monitor thread mirrors the communicator's abort flag into the word kernels
//    poll, reads the failure record kernels leave (abort, BRAID_TIMEOUT, a send/recv size
//    mismatch) and CUDA errors of launched work, and reports them through `onFailure`; it
//    also tells the network proxy when launched work that may use it has finished.
//
// Without CUDA, createGpuExecutor is an error.
#pragma once

// The executor interface, its configuration and createGpuExecutor are in exec/executor.h;
// the batch it runs is exec/work.h's.
#include "exec/executor.h"
