/*
 * pyframes_offsets.c — prints the row of libgpuphase/pyframes.c's layout
 * table for the CPython whose headers it is compiled against:
 *   cc -I$INC -I$INC/internal tests/e2e/pyframes_offsets.c && ./a.out
 * with INC=.../include/python3.X. A maintenance tool, not built by make.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <stddef.h>
#include <stdio.h>
int main(void){
#if PY_VERSION_HEX >= 0x030d0000
 unsigned ts_cf = offsetof(PyThreadState,current_frame), cf_cur = 0; int direct=1;
 unsigned fr_code = offsetof(_PyInterpreterFrame,f_executable), fr_instr = offsetof(_PyInterpreterFrame,instr_ptr);
#else
 unsigned ts_cf = offsetof(PyThreadState,cframe), cf_cur = offsetof(_PyCFrame,current_frame); int direct=0;
 unsigned fr_code = offsetof(_PyInterpreterFrame,f_code), fr_instr = offsetof(_PyInterpreterFrame,prev_instr);
#endif
 PyASCIIObject o; memset(&o,0,sizeof o); o.state.compact=1; unsigned st; memcpy(&st,&o.state,4);
 PyASCIIObject o2; memset(&o2,0,sizeof o2); o2.state.ascii=1; unsigned st2; memcpy(&st2,&o2.state,4);
 printf("{ 0x%04x, %d, %u, %u, %zu, %zu, %u, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, %zu, 0x%x, 0x%x },\n",
  PY_VERSION_HEX>>16, direct, ts_cf, cf_cur, (size_t)fr_code, offsetof(_PyInterpreterFrame,previous), fr_instr,
  offsetof(_PyInterpreterFrame,owner),
  offsetof(PyCodeObject,co_filename), offsetof(PyCodeObject,co_qualname), offsetof(PyCodeObject,co_firstlineno),
  offsetof(PyCodeObject,co_linetable), offsetof(PyCodeObject,co_code_adaptive),
  offsetof(PyVarObject,ob_size), offsetof(PyBytesObject,ob_sval),
  offsetof(PyASCIIObject,length), offsetof(PyASCIIObject,state), sizeof(PyASCIIObject), st, st2);
#ifdef FRAME_OWNED_BY_CSTACK
 printf("cstack owner %d\n", FRAME_OWNED_BY_CSTACK);
#endif
 return 0;}
