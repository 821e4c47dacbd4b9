/*
 * gpuphase.c — main() of the `gpuphase` command: dispatches the verbs
 * (record: record.c, trigger: trigger.c, attach: attach.c, report/diff/export: report.c, agent:
 * gpuphase-agent through locate.c, help: help.c) and prints --help and --version. Dispatch only: the verbs call the
 * shared helpers (locate.c, help.c) directly, never back into this file.
 *
 * Single-threaded ordinary program: errors are one "gpuphase: ..." line on
 * stderr and a non-zero exit status (2 = usage, 1 = failure, 127 = a
 * program not found).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		gp_help_print(NULL);
		return 2;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0) {
		gp_help_print(argc > 2 ? argv[2] : NULL);
		return 0;
	}
	if (strcmp(verb, "help") == 0) {
		if (argc > 2 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
			gp_help_print("help");
			return 0;
		}
		if (argc > 2 && gp_help_print(argv[2]) != 0) {
			fprintf(stderr, "gpuphase: no help for '%s': not a gpuphase command (see gpuphase --help)\n",
				argv[2]);
			return 2;
		}
		if (argc <= 2)
			gp_help_print(NULL);
		return 0;
	}
	if (strcmp(verb, "-v") == 0 || strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
		printf("gpuphase %s\n", GP_CLI_VERSION);
		return 0;
	}
	if (strcmp(verb, "record") == 0)
		return gp_record_main(argc - 1, argv + 1);
	if (strcmp(verb, "trigger") == 0)
		return gp_trigger_main(argc - 1, argv + 1);
	if (strcmp(verb, "stop") == 0)
		return gp_trigger_stop_main(argc - 1, argv + 1);
	if (strcmp(verb, "attach") == 0)
		return gp_attach_main(argc - 1, argv + 1);
	if (strcmp(verb, "report") == 0 || strcmp(verb, "diff") == 0 || strcmp(verb, "export") == 0)
		return gp_report_exec(verb, argc - 1, argv + 1);
	if (strcmp(verb, "agent") == 0)
		return gp_locate_exec("gpuphase-agent", argc - 1, argv + 1);
	if (verb[0] == '-')
		fprintf(stderr, "gpuphase: unknown option '%s' (options go after the command: gpuphase record --help)\n", verb);
	else
		fprintf(stderr, "gpuphase: '%s' is not a gpuphase command; commands: record, trigger, stop, attach, report, diff, export, agent, help\n", verb);
	return 2;
}
