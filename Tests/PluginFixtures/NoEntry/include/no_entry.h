/* A test fixture: a real shared library that does not export courier_plugin_entry. */
#ifndef COURIER_TEST_NO_ENTRY_H
#define COURIER_TEST_NO_ENTRY_H
int courier_test_not_a_plugin(void);
#endif
