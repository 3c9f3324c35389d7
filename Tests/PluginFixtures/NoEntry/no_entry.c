/* A test fixture: a shared library without the plugin entry symbol. Courier must refuse it. */
#include "no_entry.h"

int courier_test_not_a_plugin(void) { return 42; }
