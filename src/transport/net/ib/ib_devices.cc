#include "transport/net/ib/ib_devices.h"

#include <climits>
#include <cstdlib>
#include <cstring>

#include "util/format.h"
#include "util/name_list.h"

namespace braid {

std::string IbPort::describe() const {
  const char* kind = linkLayer == IbLinkLayer::InfiniBand ? "IB" : linkLayer == IbLinkLayer::Ethernet ? "RoCE" : "?";
  std::string out = strFormat("%s:%d %s", device.c_str(), port, kind);
  if (speedMbps > 0) out += strFormat(" %g Gb/s", speedMbps / 1000.0);
  if (!pciPath.empty()) out += " " + pciPath;
  return out;
}

std::vector<IbPort> filterPorts(const std::vector<IbPort>& all, const std::string& hcaSpec) {
  NameList list = NameList::parse(hcaSpec);
  std::vector<IbPort> kept;
  for (const IbPort& port : all) {
    if (list.matches(port.device, port.port)) kept.push_back(port);
  }
  return kept;
}

int ibSpeedMbps(int activeSpeed, int activeWidth) {
  int lane = 0;
  switch (activeSpeed) {
    case 1:
      lane = 2500;
      break;  // SDR
    case 2:
      lane = 5000;
      break;  // DDR
    case 4:
      lane = 10000;
      break;  // QDR
    case 8:
      lane = 10000;
      break;  // FDR10
    case 16:
      lane = 14000;
      break;  // FDR
    case 32:
      lane = 25000;
      break;  // EDR
    case 64:
      lane = 50000;
      break;  // HDR
    case 128:
      lane = 100000;
      break;  // NDR
    case 256:
      lane = 200000;
      break;  // XDR
    default:
      return 0;
  }
  int width = 0;
  switch (activeWidth) {
    case 1:
      width = 1;
      break;
    case 2:
      width = 4;
      break;
    case 4:
      width = 8;
      break;
    case 8:
      width = 12;
      break;
    case 16:
      width = 2;
      break;
    default:
      return 0;
  }
  return lane * width;
}

Status listIbPorts(const IbvApi& api, const std::string& sysfsRoot, std::vector<IbPort>* out,
                   std::vector<std::string>* notes) {
  out->clear();
  int count = 0;
  ibv_device** devices = api.getDeviceList(&count);
  if (!devices) {
    // ENOSYS: no kernel support (no /sys/class/infiniband); not an error, just no device.
    notes->push_back(strFormat("ibv_get_device_list failed: %s", std::strerror(errno)));
    return okStatus();
  }
  for (int d = 0; d < count; ++d) {
    const char* name = api.getDeviceName(devices[d]);
    ibv_context* context = api.openDevice(devices[d]);
    if (!context) {
      notes->push_back(strFormat("%s: cannot open (%s)", name, std::strerror(errno)));
      continue;
    }
    ibv_device_attr deviceAttr{};
    if (api.queryDevice(context, &deviceAttr) != 0) {
      notes->push_back(strFormat("%s: ibv_query_device failed", name));
      api.closeDevice(context);
      continue;
    }
    char resolved[PATH_MAX];
    std::string devicePath = sysfsRoot + "/class/infiniband/" + name + "/device";
    std::string pciPath = realpath(devicePath.c_str(), resolved) ? resolved : "";
    for (int p = 1; p <= deviceAttr.phys_port_cnt; ++p) {
      ibv_port_attr portAttr{};
      if (api.queryPort(context, static_cast<uint8_t>(p), &portAttr) != 0) {
        notes->push_back(strFormat("%s:%d: ibv_query_port failed", name, p));
        continue;
      }
      if (portAttr.state != IBV_PORT_ACTIVE) {
        notes->push_back(strFormat("%s:%d: not ACTIVE (state %d)", name, p, static_cast<int>(portAttr.state)));
        continue;
      }
      IbPort port;
      port.device = name;
      port.port = p;
      port.linkLayer = portAttr.link_layer == IBV_LINK_LAYER_ETHERNET ? IbLinkLayer::Ethernet : IbLinkLayer::InfiniBand;
      port.speedMbps = ibSpeedMbps(portAttr.active_speed, portAttr.active_width);
      port.pciPath = pciPath;
      port.gidTableLen = portAttr.gid_tbl_len;
      port.lid = portAttr.lid;
      port.activeMtu = portAttr.active_mtu;
      port.maxQpWr = deviceAttr.max_qp_wr;
      port.maxCqe = deviceAttr.max_cqe;
      out->push_back(port);
    }
    api.closeDevice(context);
  }
  api.freeDeviceList(devices);
  return okStatus();
}

}  // namespace braid
