/*
 * pyframes_offsets.c — prints the row of libgpuphase/pyframes.c's layout
 * table for the CPython whose headers it is compiled against:
 *   cc -I$INC -I$INC/internal tests/e2e/pyframes_offsets.c && ./a.out
 * with INC=.../include/python3.X (3.9 or newer). A maintenance tool, not
 * built by make. It also prints the two PyASCIIObject state bits the
 * library tests (compact = 0x20, ascii = 0x40 expected).
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#include <stddef.h>
#include <stdio.h>
int main(void){
 PyASCIIObject o; memset(&o,0,sizeof o); o.state.compact=1; unsigned st; memcpy(&st,&o.state,4);
 PyASCIIObject o2; memset(&o2,0,sizeof o2); o2.state.ascii=1; unsigned st2; memcpy(&st2,&o2.state,4);
#if PY_VERSION_HEX < 0x030b0000
 /* 3.9 / 3.10: PyFrameObject chain, co_lnotab (3.9) / co_linetable (3.10) */
#if PY_VERSION_HEX >= 0x030a0000
 const char *lines = "GP_PY_RANGES"; unsigned unit = 2, tab = offsetof(PyCodeObject,co_linetable);
#else
 const char *lines = "GP_PY_LNOTAB"; unsigned unit = 1, tab = offsetof(PyCodeObject,co_lnotab);
#endif
 printf("{ .version = 0x%04x, .lines = %s, .frame_object = 1, .lasti_unit = %u, .direct = 1,\n"
        "  .ts_frame = %zu, .fr_code = %zu, .fr_previous = %zu, .fr_instr = %zu,\n"
        "  .co_filename = %zu, .co_qualname = %zu, .co_firstlineno = %zu, .co_linetable = %u,\n",
  PY_VERSION_HEX>>16, lines, unit, offsetof(PyThreadState,frame), offsetof(PyFrameObject,f_code),
  offsetof(PyFrameObject,f_back), offsetof(PyFrameObject,f_lasti),
  offsetof(PyCodeObject,co_filename), offsetof(PyCodeObject,co_name), offsetof(PyCodeObject,co_firstlineno), tab);
#else
#if PY_VERSION_HEX >= 0x030d0000
 unsigned ts_cf = offsetof(PyThreadState,current_frame), cf_cur = 0; int direct=1;
 unsigned fr_code = offsetof(_PyInterpreterFrame,f_executable), fr_instr = offsetof(_PyInterpreterFrame,instr_ptr);
#else
 unsigned ts_cf = offsetof(PyThreadState,cframe), cf_cur = offsetof(_PyCFrame,current_frame); int direct=0;
 unsigned fr_code = offsetof(_PyInterpreterFrame,f_code), fr_instr = offsetof(_PyInterpreterFrame,prev_instr);
#endif
 printf("{ .version = 0x%04x, .lines = GP_PY_LOCATIONS, .direct = %d,\n"
        "  .ts_frame = %u, .cf_current = %u, .fr_code = %u, .fr_previous = %zu, .fr_instr = %u, .fr_owner = %zu,\n"
        "  .co_filename = %zu, .co_qualname = %zu, .co_firstlineno = %zu, .co_linetable = %zu, .co_code = %zu,\n",
  PY_VERSION_HEX>>16, direct, ts_cf, cf_cur, fr_code, offsetof(_PyInterpreterFrame,previous), fr_instr,
  offsetof(_PyInterpreterFrame,owner),
  offsetof(PyCodeObject,co_filename), offsetof(PyCodeObject,co_qualname), offsetof(PyCodeObject,co_firstlineno),
  offsetof(PyCodeObject,co_linetable), offsetof(PyCodeObject,co_code_adaptive));
#endif
 printf("  .bytes_size = %zu, .bytes_data = %zu, .str_length = %zu, .str_state = %zu, .str_ascii_data = %zu },"
        " /* state bits 0x%x 0x%x */\n",
  offsetof(PyVarObject,ob_size), offsetof(PyBytesObject,ob_sval),
  offsetof(PyASCIIObject,length), offsetof(PyASCIIObject,state), sizeof(PyASCIIObject), st, st2);
#if PY_VERSION_HEX < 0x030b0000
 printf("/* PyObject.ob_type %zu, f_lasti is %zu bytes */\n", offsetof(PyObject,ob_type), sizeof(((PyFrameObject*)0)->f_lasti));
#endif
#ifdef FRAME_OWNED_BY_CSTACK
 printf("cstack owner %d\n", FRAME_OWNED_BY_CSTACK);
#endif
 return 0;}
