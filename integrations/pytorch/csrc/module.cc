// braid_torch._C: the creator that braid_torch/__init__.py registers as the "braid"
// backend. Torch's own bindings (torch/csrc/utils/pybind.h) convert Store and
// ProcessGroup through their intrusive_ptr holders.
#include <nccl.h>

#include <chrono>

#include <torch/csrc/utils/pybind.h>

#include "comm.h"
#include "process_group.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "Braid's torch.distributed backend (host-mode collectives)";
  py::register_exception<braid::torch_ext::BraidError>(m, "BraidError", PyExc_RuntimeError);
  m.def(
      "create_process_group",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeoutSeconds) {
        TORCH_CHECK(timeoutSeconds > 0, "braid: the timeout must be positive (got ", timeoutSeconds, " s)");
        auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000.0));
        return braid::torch_ext::createProcessGroup(store, rank, size, timeout);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_seconds"),
      py::call_guard<py::gil_scoped_release>(),
      "Makes the process group of the 'braid' backend (torch.distributed calls this through "
      "Backend.register_backend).");
  m.def("nccl_version", [] {
    int v = 0;
    ncclGetVersion(&v);
    return v;
  });
}
