// One PJRT plugin loaded into the process (dlopen + GetPjrtApi), its client and the device programs run on, behind
// RAII handles: compile StableHLO text, move tensors to and from the device, execute, serialize. Every PJRT error
// becomes an ltx::Error naming the plugin; every event is awaited and destroyed (an upload that may still read host
// memory, when its buffer goes). The header is the one
// scripts/setup installs (pypjrt's copy of XLA's pjrt_c_api.h); each call's struct size comes from its macros.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/op.h"

struct PJRT_Api;
struct PJRT_Client;
struct PJRT_Device;
struct PJRT_Buffer;
struct PJRT_LoadedExecutable;

namespace ltx::xla {

class PjrtRuntime;

// A buffer on the device, destroyed with its last owner.
class DeviceBuffer {
 public:
  DeviceBuffer(const PjrtRuntime& runtime, PJRT_Buffer* buffer, TensorMeta meta)
      : runtime_(&runtime), buffer_(buffer), meta_(std::move(meta)) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  PJRT_Buffer* handle() const { return buffer_; }
  const TensorMeta& meta() const { return meta_; }
  // A buffer made from host memory without a copy (or with one still running): that memory stays alive, and its
  // done event is awaited, until the buffer goes.
  void hold_host(Tensor host, void* done_event) {
    host_ = std::move(host);
    host_done_ = done_event;
  }
  size_t bytes() const { return dtype_bytes_for(meta_.dtype, meta_.shape.numel()); }

 private:
  const PjrtRuntime* runtime_;
  PJRT_Buffer* buffer_;
  TensorMeta meta_;
  Tensor host_;
  void* host_done_ = nullptr;  // PJRT_Event*
};
using DeviceTensor = std::shared_ptr<DeviceBuffer>;

class Executable {
 public:
  Executable(const PjrtRuntime& runtime, PJRT_LoadedExecutable* executable, size_t n_outputs, size_t temp_bytes)
      : runtime_(&runtime), executable_(executable), n_outputs_(n_outputs), temp_bytes_(temp_bytes) {}
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  PJRT_LoadedExecutable* handle() const { return executable_; }
  size_t n_outputs() const { return n_outputs_; }
  // The device memory a run takes besides its arguments and results (XLA's compiled memory stats; 0 where the
  // plugin does not say): intermediates such as attention's scores.
  size_t temp_bytes() const { return temp_bytes_; }
  void describe(size_t n_outputs, size_t temp_bytes) {
    n_outputs_ = n_outputs;
    temp_bytes_ = temp_bytes;
  }

 private:
  const PjrtRuntime* runtime_;
  PJRT_LoadedExecutable* executable_;
  size_t n_outputs_;
  size_t temp_bytes_;
};

class PjrtRuntime {
 public:
  // The plugin at `path`, loaded once per process and kept for its life (plugins are not unloaded). Throws
  // ltx::Error naming the plugin when it cannot be loaded, has no GetPjrtApi, speaks another major API version,
  // fails to create a client or has no device.
  static const PjrtRuntime& open(const std::string& path);
  ~PjrtRuntime();

  const std::string& plugin_path() const { return path_; }
  std::string api_version() const;  // "0.115"
  // The platform and its version as the client reports them ("cpu", "<version>"), and the device's kind.
  const std::string& platform() const { return platform_; }
  const std::string& platform_version() const { return platform_version_; }
  const std::string& device_kind() const { return device_kind_; }
  // The serialized CompileOptionsProto every compile passes.
  const std::string& compile_options() const;

  // Compiles a StableHLO module (MLIR text) for one device. The message of a failure names `what`.
  std::unique_ptr<Executable> compile(const std::string& mlir, const std::string& what) const;
  std::string serialize(const Executable& executable) const;
  std::unique_ptr<Executable> deserialize(const std::string& bytes) const;

  // A device copy of `host` (any strides; a contiguous copy is made when needed). With `alias_host`, a plugin that
  // can may use the host memory itself (the caller keeps `host` alive and unchanged for the buffer's life).
  DeviceTensor upload(const Tensor& host, bool alias_host = false) const;
  // Copies a device buffer into `host` (contiguous, of the buffer's dtype and shape).
  void download(const DeviceBuffer& buffer, const Tensor& host) const;
  // Runs `executable` on `arguments` (in the program's parameter order); returns its results.
  std::vector<DeviceTensor> execute(const Executable& executable, std::span<const DeviceBuffer* const> arguments,
                                    std::span<const TensorMeta> result_metas) const;

  // Throws ltx::Error naming the plugin and `what` when `error` (a PJRT_Error*) is set, destroying it; discard
  // destroys one whose failure changes nothing (a destroy that failed).
  void check(void* error, const std::string& what) const;
  void discard(void* error) const;
  const PJRT_Api* api() const { return api_; }

 private:
  explicit PjrtRuntime(std::string path);
  void await_event(void* event, const std::string& what) const;
  void describe_client(const std::string& who);  // devices, platform, device kind
  // An Executable around a loaded one: its output count and memory stats read.
  std::unique_ptr<Executable> wrap(PJRT_LoadedExecutable* loaded, const std::string& what) const;

  std::string path_;
  void* library_ = nullptr;
  const PJRT_Api* api_ = nullptr;
  PJRT_Client* client_ = nullptr;
  PJRT_Device* device_ = nullptr;
  std::string platform_, platform_version_, device_kind_;
};

// The plugin a backend loads when none is named: $LTX_XLA_PLUGIN, else XLA's CPU plugin where scripts/setup put it
// (build/deps/pjrt/lib), else "" (then `--xla-plugin` must name one).
std::string default_plugin_path();
// `path` made absolute and free of links and dots, so one plugin has one key however it was named.
std::string canonical_plugin_path(const std::string& path);

}  // namespace ltx::xla
