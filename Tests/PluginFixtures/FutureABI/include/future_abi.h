/* A test fixture: a plugin whose descriptor claims an ABI version from the future. */
#ifndef COURIER_TEST_FUTURE_ABI_H
#define COURIER_TEST_FUTURE_ABI_H
#include "courier_plugin.h"
COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void);
#endif
