/* pprof_pb.h - what the pprof writer and reader share beyond pprof.h: the message types generated
 * from proto/profile.proto, under short names, and the name of the kernel image's mapping. */
#ifndef BT_PPROF_PB_H
#define BT_PPROF_PB_H

#include "kernel/kframe.h"
#include "proto/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The kernel image's mapping; a module's is "[NAME]". */
#define BT_PPROF_KERNEL_MAPPING BT_KFRAME_IMAGE

#endif
