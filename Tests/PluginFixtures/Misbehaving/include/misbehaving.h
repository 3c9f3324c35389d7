/* A test fixture: a plugin that breaks the client contract in every way it can. */
#ifndef COURIER_TEST_MISBEHAVING_H
#define COURIER_TEST_MISBEHAVING_H
#include "courier_plugin.h"
COURIER_PLUGIN_EXPORT const courier_plugin_descriptor *courier_plugin_entry(void);
/* How many handles were created, started, stopped and destroyed so far. */
COURIER_PLUGIN_EXPORT void courier_test_misbehaving_counters(int64_t counts[4]);
#endif
