// braid_torch._C: the backend's Python side. BraidBackend is bound as a subclass of torch's
// c10d Backend class (torch's own pybind11 and holder), so that what torch.distributed
// gets back is a Backend and its split helpers are reachable from Python.
#include <chrono>
#include <string>

#include <torch/csrc/utils/pybind.h>

#include "backend.h"
#include "braid_library.h"
#include "comm.h"

namespace py = pybind11;

namespace {

std::chrono::milliseconds toMilliseconds(double seconds) {
  TORCH_CHECK(seconds > 0, "braid: the timeout must be positive (got ", seconds, " s)");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  using braid::torch_ext::BraidBackend;
  m.doc() = "Braid's torch.distributed backend (host-mode collectives)";
  py::register_exception<braid::torch_ext::BraidError>(m, "BraidError", PyExc_RuntimeError);
  // The base class is torch._C._distributed_c10d.Backend (import torch.distributed first).
  py::class_<BraidBackend, c10d::Backend, c10::intrusive_ptr<BraidBackend>>(m, "BraidBackend")
      .def(
          "perform_nocolor_split", [](BraidBackend& self, const py::object& /*device*/) { self.performNocolorSplit(); },
          py::arg("device") = py::none(), py::call_guard<py::gil_scoped_release>(),
          "Takes part in a split of this group without joining a new group (new_group on a non-member).")
      .def(
          "split_for_group",
          [](BraidBackend& self, const c10::intrusive_ptr<c10d::Store>& store, const std::vector<int64_t>& ranks,
             double timeoutSeconds) { return self.splitForGroup(store, ranks, toMilliseconds(timeoutSeconds)); },
          py::arg("store"), py::arg("ranks"), py::arg("timeout_seconds"), py::call_guard<py::gil_scoped_release>(),
          "The backend of a new group of this group's ranks `ranks`, through ncclCommSplit.");
  m.def(
      "load_library", [](const std::string& path) { braid::torch_ext::loadBraidLibrary(path); }, py::arg("path"),
      "Opens Braid's libnccl.so.2 at `path` for the backend (braid_torch/__init__.py does, once).");
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeoutSeconds) {
        return c10::make_intrusive<BraidBackend>(store, rank, size, toMilliseconds(timeoutSeconds));
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_seconds"),
      py::call_guard<py::gil_scoped_release>(),
      "Makes the backend of a new group (torch.distributed calls this through Backend.register_backend).");
  m.def(
      "finish_all", [] { braid::torch_ext::Engine::finishAll(std::chrono::seconds(10)); },
      py::call_guard<py::gil_scoped_release>(),
      "Runs what every braid group has queued (at most 10 s each); braid_torch calls it at exit.");
  m.def("nccl_version", [] {
    int v = 0;
    braid::torch_ext::braidLib().ncclGetVersion(&v);
    return v;
  });
}
