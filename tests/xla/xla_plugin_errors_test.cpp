// A plugin that cannot serve is one clear error naming it: no file, a library that is not a PJRT plugin, another
// major API version, a failed client, no device (the fake plugin of fake_pjrt_plugin.c plays each part).
#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/xla/pjrt_runtime.h"
#include "core/error.h"

namespace ltx::test {
namespace {

std::string error_opening(const std::string& path) {
  try {
    xla::PjrtRuntime::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string fake_plugin_error(const char* mode) {
  setenv("LTX_FAKE_PJRT", mode, 1);
  const std::string message = error_opening(LTX_FAKE_PJRT_PLUGIN);
  unsetenv("LTX_FAKE_PJRT");
  return message;
}

TEST(XlaPluginErrors, AMissingPluginIsNamed) {
  const std::string message = error_opening("/nonexistent/pjrt_plugin.so");
  EXPECT_NE(message.find("XLA plugin '/nonexistent/pjrt_plugin.so' could not be loaded"), std::string::npos) << message;
  EXPECT_NE(error_opening("").find("--xla-plugin"), std::string::npos);
}

TEST(XlaPluginErrors, ALibraryWithoutGetPjrtApiIsNotAPlugin) {
  const std::string message = error_opening("libm.so.6");  // a shared library, but no plugin
  EXPECT_NE(message.find("is not a PJRT plugin (it has no GetPjrtApi)"), std::string::npos) << message;
}

TEST(XlaPluginErrors, AnotherMajorApiVersionIsRefusedNamingBoth) {
  const std::string message = fake_plugin_error("major");
  EXPECT_NE(message.find("speaks PJRT API 1."), std::string::npos) << message;
  EXPECT_NE(message.find("this build speaks 0."), std::string::npos) << message;
}

TEST(XlaPluginErrors, AFailedClientCarriesThePluginsMessage) {
  const std::string message = fake_plugin_error("client");
  EXPECT_NE(message.find("creating a client: no accelerator found (fake plugin)"), std::string::npos) << message;
  EXPECT_NE(message.find(LTX_FAKE_PJRT_PLUGIN), std::string::npos) << message;
}

TEST(XlaPluginErrors, APluginWithoutDevicesIsRefused) {
  const std::string message = fake_plugin_error("nodevice");
  EXPECT_NE(message.find("has no device this process can use"), std::string::npos) << message;
}

}  // namespace
}  // namespace ltx::test
