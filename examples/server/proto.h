/*
 * proto.h — the wire format between the example inference server
 * (server.cu) and its load client (client.c): fixed-size little-endian
 * messages on a UNIX stream socket, one request answered by one reply,
 * in order.
 */
#ifndef GP_SERVER_PROTO_H
#define GP_SERVER_PROTO_H

#include <stdint.h>

#define SRV_MAGIC 0x47505356u /* "GPSV" */
#define SRV_DIM 256           /* input and hidden width */

enum srv_op { SRV_OP_INFER = 1, SRV_OP_QUIT = 2 };

struct srv_request {
	uint32_t magic;
	uint32_t op;  /* enum srv_op */
	uint32_t id;  /* echoed in the reply */
	uint32_t pad;
	float input[SRV_DIM];
};

struct srv_reply {
	uint32_t magic;
	uint32_t id;
	float score;   /* sum(relu(W x)) of the request's input */
	uint32_t status; /* 0 = ok, else the cudaError_t of the request */
};

#endif
