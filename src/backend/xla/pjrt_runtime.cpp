#include "backend/xla/pjrt_runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/error.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace ltx::xla {

namespace {

// Each call's arguments, zeroed, with the struct size this header defines (the plugin reads only what it knows).
template <typename Args>
Args args_of(size_t struct_size) {
  Args a{};
  a.struct_size = struct_size;
  return a;
}
#define PJRT_ARGS(name) args_of<name##_Args>(name##_Args_STRUCT_SIZE)

// Whether the plugin's function table reaches `slot` (older plugins have shorter tables).
bool has_slot(const PJRT_Api* api, size_t offset) { return api->struct_size >= offset + sizeof(void*); }
#define PJRT_HAS(api, fn) (has_slot(api, offsetof(PJRT_Api, fn)) && (api)->fn != nullptr)

PJRT_Buffer_Type buffer_type(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return PJRT_Buffer_Type_F32;
    case DType::BF16:
      return PJRT_Buffer_Type_BF16;
    case DType::F16:
      return PJRT_Buffer_Type_F16;
    case DType::I32:
      return PJRT_Buffer_Type_S32;
    case DType::I64:
      return PJRT_Buffer_Type_S64;
    case DType::U8:
      return PJRT_Buffer_Type_U8;
    case DType::F8_E4M3:
      return PJRT_Buffer_Type_F8E4M3FN;
    case DType::F8_E5M2:
      return PJRT_Buffer_Type_F8E5M2;
    default:
      fail("xla", "no PJRT buffer type holds " + std::string(dtype_name(dtype)));
  }
}

// Compile options (xla CompileOptionsProto, hand-encoded): executable_build_options (field 3) with num_replicas
// (field 4) = 1 and num_partitions (field 5) = 1. Plugins abort on empty options.
const std::string kCompileOptions("\x1a\x04\x20\x01\x28\x01", 6);

}  // namespace

std::string default_plugin_path() {
  if (const char* env = std::getenv("LTX_XLA_PLUGIN"); env != nullptr && *env != '\0') return env;
#ifdef LTX_XLA_DEFAULT_PLUGIN
  if (std::filesystem::exists(LTX_XLA_DEFAULT_PLUGIN)) return LTX_XLA_DEFAULT_PLUGIN;
#endif
  return "";
}

std::string canonical_plugin_path(const std::string& path) {
  std::error_code ec;
  const std::string canonical = path.empty() ? path : std::filesystem::weakly_canonical(path, ec).string();
  return ec ? path : canonical;
}

const PjrtRuntime& PjrtRuntime::open(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PjrtRuntime>>* runtimes =
      new std::map<std::string, std::unique_ptr<PjrtRuntime>>();  // never destroyed: plugins stay loaded
  const std::string key = canonical_plugin_path(path);
  std::lock_guard lock(mutex);
  auto it = runtimes->find(key);
  if (it == runtimes->end()) it = runtimes->emplace(key, std::unique_ptr<PjrtRuntime>(new PjrtRuntime(path))).first;
  return *it->second;
}

PjrtRuntime::PjrtRuntime(std::string path) : path_(std::move(path)) {
  const std::string who = "XLA plugin '" + path_ + "'";
  if (path_.empty())
    fail("xla",
         "no XLA plugin: name one with --xla-plugin PATH or LTX_XLA_PLUGIN (scripts/setup installs XLA's CPU "
         "plugin in build/deps/pjrt/lib)");
  library_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) fail("xla", who + " could not be loaded: " + std::string(dlerror()));
  using GetApi = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetApi>(dlsym(library_, "GetPjrtApi"));
  if (get_api == nullptr) fail("xla", who + " is not a PJRT plugin (it has no GetPjrtApi)");
  api_ = get_api();
  if (api_ == nullptr) fail("xla", who + " returned no API from GetPjrtApi");
  if (api_->pjrt_api_version.major_version != PJRT_API_MAJOR) {
    fail("xla", who + " speaks PJRT API " + api_version() + "; this build speaks " + std::to_string(PJRT_API_MAJOR) +
                    "." + std::to_string(PJRT_API_MINOR) + " (the major versions must match)");
  }
  // Every function this file calls (PJRT_Plugin_Initialize and the memory stats are optional).
#define PJRT_REQUIRE(fn) \
  if (!PJRT_HAS(api_, fn)) fail("xla", who + " (PJRT API " + api_version() + ") has no " #fn ", which this build calls")
  PJRT_REQUIRE(PJRT_Error_Destroy);
  PJRT_REQUIRE(PJRT_Error_Message);
  PJRT_REQUIRE(PJRT_Client_Create);
  PJRT_REQUIRE(PJRT_Client_Destroy);
  PJRT_REQUIRE(PJRT_Client_AddressableDevices);
  PJRT_REQUIRE(PJRT_Client_PlatformName);
  PJRT_REQUIRE(PJRT_Client_PlatformVersion);
  PJRT_REQUIRE(PJRT_Device_GetDescription);
  PJRT_REQUIRE(PJRT_DeviceDescription_Kind);
  PJRT_REQUIRE(PJRT_Client_Compile);
  PJRT_REQUIRE(PJRT_LoadedExecutable_GetExecutable);
  PJRT_REQUIRE(PJRT_LoadedExecutable_Destroy);
  PJRT_REQUIRE(PJRT_LoadedExecutable_Execute);
  PJRT_REQUIRE(PJRT_Executable_NumOutputs);
  PJRT_REQUIRE(PJRT_Executable_Destroy);
  PJRT_REQUIRE(PJRT_Executable_Serialize);
  PJRT_REQUIRE(PJRT_Executable_DeserializeAndLoad);
  PJRT_REQUIRE(PJRT_Client_BufferFromHostBuffer);
  PJRT_REQUIRE(PJRT_Buffer_ToHostBuffer);
  PJRT_REQUIRE(PJRT_Buffer_Destroy);
  PJRT_REQUIRE(PJRT_Event_Await);
  PJRT_REQUIRE(PJRT_Event_Destroy);
#undef PJRT_REQUIRE

  if (PJRT_HAS(api_, PJRT_Plugin_Initialize)) {
    auto init = PJRT_ARGS(PJRT_Plugin_Initialize);
    check(api_->PJRT_Plugin_Initialize(&init), "initializing the plugin");
  }
  auto create = PJRT_ARGS(PJRT_Client_Create);
  check(api_->PJRT_Client_Create(&create), "creating a client");
  client_ = create.client;
  try {
    describe_client(who);
  } catch (const Error&) {  // the client goes with the failed runtime
    auto destroy = PJRT_ARGS(PJRT_Client_Destroy);
    destroy.client = client_;
    discard(api_->PJRT_Client_Destroy(&destroy));
    throw;
  }
}

void PjrtRuntime::describe_client(const std::string& who) {
  auto devices = PJRT_ARGS(PJRT_Client_AddressableDevices);
  devices.client = client_;
  check(api_->PJRT_Client_AddressableDevices(&devices), "listing devices");
  if (devices.num_addressable_devices == 0) fail("xla", who + " has no device this process can use");
  device_ = devices.addressable_devices[0];

  auto name = PJRT_ARGS(PJRT_Client_PlatformName);
  name.client = client_;
  check(api_->PJRT_Client_PlatformName(&name), "reading the platform name");
  platform_.assign(name.platform_name, name.platform_name_size);
  auto version = PJRT_ARGS(PJRT_Client_PlatformVersion);
  version.client = client_;
  check(api_->PJRT_Client_PlatformVersion(&version), "reading the platform version");
  platform_version_.assign(version.platform_version, version.platform_version_size);
  auto description = PJRT_ARGS(PJRT_Device_GetDescription);
  description.device = device_;
  check(api_->PJRT_Device_GetDescription(&description), "describing the device");
  auto kind = PJRT_ARGS(PJRT_DeviceDescription_Kind);
  kind.device_description = description.device_description;
  check(api_->PJRT_DeviceDescription_Kind(&kind), "reading the device kind");
  device_kind_.assign(kind.device_kind, kind.device_kind_size);
}

PjrtRuntime::~PjrtRuntime() {
  if (client_ != nullptr) {
    auto destroy = PJRT_ARGS(PJRT_Client_Destroy);
    destroy.client = client_;
    discard(api_->PJRT_Client_Destroy(&destroy));
  }
}

void PjrtRuntime::discard(void* error) const {
  if (error == nullptr) return;
  auto destroy = PJRT_ARGS(PJRT_Error_Destroy);
  destroy.error = static_cast<PJRT_Error*>(error);
  api_->PJRT_Error_Destroy(&destroy);
}

const std::string& PjrtRuntime::compile_options() const { return kCompileOptions; }

std::string PjrtRuntime::api_version() const {
  return std::to_string(api_->pjrt_api_version.major_version) + "." +
         std::to_string(api_->pjrt_api_version.minor_version);
}

void PjrtRuntime::check(void* error_ptr, const std::string& what) const {
  auto* error = static_cast<PJRT_Error*>(error_ptr);
  if (error == nullptr) return;
  auto message = PJRT_ARGS(PJRT_Error_Message);
  message.error = error;
  api_->PJRT_Error_Message(&message);
  std::string text(message.message, message.message_size);
  discard(error);
  fail("xla", "XLA plugin '" + path_ + "' (PJRT API " + api_version() + "), " + what + ": " + text);
}

void PjrtRuntime::await_event(void* event_ptr, const std::string& what) const {
  auto* event = static_cast<PJRT_Event*>(event_ptr);
  if (event == nullptr) return;
  auto wait = PJRT_ARGS(PJRT_Event_Await);
  wait.event = event;
  PJRT_Error* error = api_->PJRT_Event_Await(&wait);
  auto destroy = PJRT_ARGS(PJRT_Event_Destroy);
  destroy.event = event;
  discard(api_->PJRT_Event_Destroy(&destroy));
  check(error, what);
}

std::unique_ptr<Executable> PjrtRuntime::compile(const std::string& mlir, const std::string& what) const {
  auto program = args_of<PJRT_Program>(PJRT_Program_STRUCT_SIZE);
  std::string code = mlir;
  program.code = code.data();
  program.code_size = code.size();
  static const char kFormat[] = "mlir";
  program.format = kFormat;
  program.format_size = sizeof kFormat - 1;
  auto compile = PJRT_ARGS(PJRT_Client_Compile);
  compile.client = client_;
  compile.program = &program;
  compile.compile_options = kCompileOptions.data();
  compile.compile_options_size = kCompileOptions.size();
  check(api_->PJRT_Client_Compile(&compile), "compiling " + what);
  return wrap(compile.executable, what);
}

std::unique_ptr<Executable> PjrtRuntime::wrap(PJRT_LoadedExecutable* loaded, const std::string& what) const {
  auto owner = std::make_unique<Executable>(*this, loaded, 0, 0);  // destroys `loaded` if a step below throws
  auto get = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable);
  get.loaded_executable = loaded;
  check(api_->PJRT_LoadedExecutable_GetExecutable(&get), "reading the executable of " + what);
  auto outputs = PJRT_ARGS(PJRT_Executable_NumOutputs);
  outputs.executable = get.executable;
  PJRT_Error* error = api_->PJRT_Executable_NumOutputs(&outputs);
  size_t temp_bytes = 0;
  if (error == nullptr && PJRT_HAS(api_, PJRT_Executable_GetCompiledMemoryStats)) {
    auto stats = PJRT_ARGS(PJRT_Executable_GetCompiledMemoryStats);
    stats.executable = get.executable;
    if (PJRT_Error* e = api_->PJRT_Executable_GetCompiledMemoryStats(&stats))
      discard(e);  // a plugin without the stats: the figure stays 0
    else
      temp_bytes = static_cast<size_t>(std::max<int64_t>(0, stats.temp_size_in_bytes));
  }
  auto destroy = PJRT_ARGS(PJRT_Executable_Destroy);
  destroy.executable = get.executable;
  discard(api_->PJRT_Executable_Destroy(&destroy));
  check(error, "counting the outputs of " + what);
  owner->describe(outputs.num_outputs, temp_bytes);
  return owner;
}

std::string PjrtRuntime::serialize(const Executable& executable) const {
  auto get = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable);
  get.loaded_executable = executable.handle();
  check(api_->PJRT_LoadedExecutable_GetExecutable(&get), "reading an executable");
  auto serialize = PJRT_ARGS(PJRT_Executable_Serialize);
  serialize.executable = get.executable;
  PJRT_Error* error = api_->PJRT_Executable_Serialize(&serialize);
  std::string bytes;
  if (error == nullptr) {
    bytes.assign(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_executable_deleter(serialize.serialized_executable);
  }
  auto destroy = PJRT_ARGS(PJRT_Executable_Destroy);
  destroy.executable = get.executable;
  discard(api_->PJRT_Executable_Destroy(&destroy));
  check(error, "serializing an executable");
  return bytes;
}

std::unique_ptr<Executable> PjrtRuntime::deserialize(const std::string& bytes) const {
  auto load = PJRT_ARGS(PJRT_Executable_DeserializeAndLoad);
  load.client = client_;
  load.serialized_executable = bytes.data();
  load.serialized_executable_size = bytes.size();
  check(api_->PJRT_Executable_DeserializeAndLoad(&load), "loading a cached executable");
  return wrap(load.loaded_executable, "a cached executable");
}

DeviceTensor PjrtRuntime::upload(const Tensor& host, bool alias_host) const {
  const Tensor source = host.contiguous();
  const bool aliased = alias_host && source.raw() == host.raw();  // the plugin aliases it or copies it, as it can
  std::vector<int64_t> dims(host.shape().begin(), host.shape().end());
  auto upload = PJRT_ARGS(PJRT_Client_BufferFromHostBuffer);
  upload.client = client_;
  upload.data = source.raw();
  upload.type = buffer_type(host.dtype());
  upload.dims = dims.data();
  upload.num_dims = dims.size();
  upload.host_buffer_semantics =
      aliased ? PJRT_HostBufferSemantics_kImmutableZeroCopy : PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  upload.device = device_;
  check(api_->PJRT_Client_BufferFromHostBuffer(&upload), "uploading " + host.describe());
  auto buffer = std::make_shared<DeviceBuffer>(*this, upload.buffer, TensorMeta{host.dtype(), host.shape()});
  if (!aliased)
    await_event(upload.done_with_host_buffer, "uploading " + host.describe());
  else
    buffer->hold_host(source, upload.done_with_host_buffer);  // awaited when the buffer goes
  return buffer;
}

void PjrtRuntime::download(const DeviceBuffer& buffer, const Tensor& host) const {
  if (!host.is_contiguous() || host.dtype() != buffer.meta().dtype || !(host.shape() == buffer.meta().shape))
    fail("xla", "download into " + host.describe() + " of a device buffer of another layout");
  auto copy = PJRT_ARGS(PJRT_Buffer_ToHostBuffer);
  copy.src = buffer.handle();
  copy.dst = host.raw();
  copy.dst_size = host.nbytes();
  check(api_->PJRT_Buffer_ToHostBuffer(&copy), "downloading " + host.describe());
  await_event(copy.event, "downloading " + host.describe());
}

std::vector<DeviceTensor> PjrtRuntime::execute(const Executable& executable,
                                               std::span<const DeviceBuffer* const> arguments,
                                               std::span<const TensorMeta> result_metas) const {
  if (result_metas.size() != executable.n_outputs())
    fail("xla", "an executable with " + std::to_string(executable.n_outputs()) + " outputs asked for " +
                    std::to_string(result_metas.size()));
  std::vector<PJRT_Buffer*> handles;
  for (const DeviceBuffer* a : arguments) handles.push_back(a->handle());
  PJRT_Buffer* const* argument_list = handles.data();
  std::vector<PJRT_Buffer*> outputs(executable.n_outputs(), nullptr);
  PJRT_Buffer** output_list = outputs.data();
  PJRT_Event* done = nullptr;
  auto options = args_of<PJRT_ExecuteOptions>(PJRT_ExecuteOptions_STRUCT_SIZE);
  auto run = PJRT_ARGS(PJRT_LoadedExecutable_Execute);
  run.executable = executable.handle();
  run.options = &options;
  run.argument_lists = &argument_list;
  run.num_devices = 1;
  run.num_args = handles.size();
  run.output_lists = &output_list;
  run.device_complete_events = &done;
  check(api_->PJRT_LoadedExecutable_Execute(&run), "running an executable");
  std::vector<DeviceTensor> results;
  for (size_t i = 0; i < outputs.size(); ++i)
    results.push_back(std::make_shared<DeviceBuffer>(*this, outputs[i], result_metas[i]));
  await_event(done, "running an executable");
  return results;
}

DeviceBuffer::~DeviceBuffer() {
  auto destroy = PJRT_ARGS(PJRT_Buffer_Destroy);
  destroy.buffer = buffer_;
  runtime_->discard(runtime_->api()->PJRT_Buffer_Destroy(&destroy));
  if (host_done_ != nullptr) {  // the plugin may still be copying from the host memory this holds
    auto wait = PJRT_ARGS(PJRT_Event_Await);
    wait.event = static_cast<PJRT_Event*>(host_done_);
    runtime_->discard(runtime_->api()->PJRT_Event_Await(&wait));
    auto done = PJRT_ARGS(PJRT_Event_Destroy);
    done.event = static_cast<PJRT_Event*>(host_done_);
    runtime_->discard(runtime_->api()->PJRT_Event_Destroy(&done));
  }
}

Executable::~Executable() {
  auto destroy = PJRT_ARGS(PJRT_LoadedExecutable_Destroy);
  destroy.executable = executable_;
  runtime_->discard(runtime_->api()->PJRT_LoadedExecutable_Destroy(&destroy));
}

}  // namespace ltx::xla
