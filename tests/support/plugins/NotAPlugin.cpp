// A test fixture: a shared library that is not a MedSeg plugin (no MEDSEG_PLUGIN entry points).
extern "C" int medseg_test_not_a_plugin() { return 42; }
