/* A PJRT plugin that fails on purpose, for the XLA backend's error paths (xla_plugin_errors_test.cpp). What it does
   is chosen by $LTX_FAKE_PJRT when GetPjrtApi is called: "major" reports API 1.0; "client" fails to create a client;
   "nodevice" creates a client with no device. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "xla/pjrt/c/pjrt_c_api.h"

/* The header declares PJRT_Error and PJRT_Client opaque; ours are these, behind casts. */
struct FakeError {
  const char* message;
};

static struct FakeError client_error = {"no accelerator found (fake plugin)"};
static int client;
static PJRT_Api api;

static void error_destroy(PJRT_Error_Destroy_Args* args) { (void)args; }
static void error_message(PJRT_Error_Message_Args* args) {
  const struct FakeError* e = (const struct FakeError*)args->error;
  args->message = e->message;
  args->message_size = strlen(e->message);
}
static PJRT_Error* error_code(PJRT_Error_GetCode_Args* args) {
  args->code = PJRT_Error_Code_UNAVAILABLE;
  return NULL;
}
static PJRT_Error* plugin_initialize(PJRT_Plugin_Initialize_Args* args) {
  (void)args;
  return NULL;
}
static PJRT_Error* client_create(PJRT_Client_Create_Args* args) {
  const char* mode = getenv("LTX_FAKE_PJRT");
  if (mode != NULL && strcmp(mode, "client") == 0) return (PJRT_Error*)&client_error;
  args->client = (PJRT_Client*)&client;
  return NULL;
}
static PJRT_Error* client_destroy(PJRT_Client_Destroy_Args* args) {
  (void)args;
  return NULL;
}
static PJRT_Error* addressable_devices(PJRT_Client_AddressableDevices_Args* args) {
  args->addressable_devices = NULL;
  args->num_addressable_devices = 0;
  return NULL;
}
static PJRT_Error* not_called(void* args) {
  (void)args;
  return (PJRT_Error*)&client_error;
}

const PJRT_Api* GetPjrtApi(void) {
  const char* mode = getenv("LTX_FAKE_PJRT");
  memset(&api, 0, sizeof api);
  /* Every function slot answers with an error, then the few the tests reach are set. */
  for (size_t offset = offsetof(PJRT_Api, PJRT_Error_Destroy); offset + sizeof(void*) <= sizeof api;
       offset += sizeof(void*)) {
    PJRT_Error* (*fn)(void*) = not_called;
    memcpy((char*)&api + offset, &fn, sizeof fn);
  }
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = mode != NULL && strcmp(mode, "major") == 0 ? 1 : PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  api.PJRT_Error_Destroy = error_destroy;
  api.PJRT_Error_Message = error_message;
  api.PJRT_Error_GetCode = error_code;
  api.PJRT_Plugin_Initialize = plugin_initialize;
  api.PJRT_Client_Create = client_create;
  api.PJRT_Client_Destroy = client_destroy;
  api.PJRT_Client_AddressableDevices = addressable_devices;
  return &api;
}
