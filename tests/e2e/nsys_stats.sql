-- nsys_stats.sql — the summaries of five `nsys stats` reports, written from
-- NVIDIA's documentation of those reports (Nsight Systems' Analysis Guide,
-- "Statistical Reports Shipped With Nsight Systems": each report's columns)
-- and of the SQLite export schema (CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS,
-- StringIds, ENUM_CUDA_MEMCPY_OPER), not copied from nsys's scripts. They
-- read only nsys's tables, so they run unchanged on an `nsys export --type
-- sqlite` file and on gpuphase's SQLite export. Plain SQL that SQLite
-- (3.35 or later, for SQRT) and DuckDB both take: window functions for the
-- median, a two-pass sample standard deviation (NULL for one instance),
-- "start" and "end" quoted. Times in ns, sizes in MB (10^6 bytes).
--
-- export_readers_check.py runs each block (split at the "-- report:" lines)
-- with Python's sqlite3 and with DuckDB's sqlite reader, and compares the
-- rows with gpuphase-report's JSON of the same trace.

-- report: cuda_gpu_kern_sum
-- CUDA GPU Kernel Summary: one row per kernel name (the demangled,
-- templated name nsys summarises by default).
WITH d AS (
	SELECT k.demangledName AS key, k."end" - k."start" AS v FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
), r AS (
	SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v) AS i, COUNT(*) OVER (PARTITION BY key) AS n FROM d
), med AS (
	SELECT key, AVG(v) AS med FROM r WHERE 2 * i IN (n, n + 1, n + 2) GROUP BY key
), agg AS (
	SELECT key, SUM(v) AS total, COUNT(*) AS cnt, AVG(v) AS avg, MIN(v) AS mn, MAX(v) AS mx FROM d GROUP BY key
), sd AS (
	SELECT d.key, CASE WHEN agg.cnt > 1 THEN SQRT(SUM((d.v - agg.avg) * (d.v - agg.avg)) / (agg.cnt - 1)) END AS sd
	FROM d JOIN agg ON agg.key = d.key GROUP BY d.key, agg.cnt
)
SELECT ROUND(100.0 * agg.total / (SELECT SUM(total) FROM agg), 1) AS "Time (%)", agg.total AS "Total Time (ns)",
	agg.cnt AS "Instances", agg.avg AS "Avg (ns)", med.med AS "Med (ns)", agg.mn AS "Min (ns)", agg.mx AS "Max (ns)",
	sd.sd AS "StdDev (ns)", s.value AS "Name"
FROM agg JOIN med ON med.key = agg.key JOIN sd ON sd.key = agg.key JOIN StringIds AS s ON s.id = agg.key
ORDER BY agg.total DESC, s.value;

-- report: cuda_api_sum
-- CUDA API Summary: one row per runtime or driver call name.
WITH d AS (
	SELECT r.nameId AS key, r."end" - r."start" AS v FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
), r AS (
	SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v) AS i, COUNT(*) OVER (PARTITION BY key) AS n FROM d
), med AS (
	SELECT key, AVG(v) AS med FROM r WHERE 2 * i IN (n, n + 1, n + 2) GROUP BY key
), agg AS (
	SELECT key, SUM(v) AS total, COUNT(*) AS cnt, AVG(v) AS avg, MIN(v) AS mn, MAX(v) AS mx FROM d GROUP BY key
), sd AS (
	SELECT d.key, CASE WHEN agg.cnt > 1 THEN SQRT(SUM((d.v - agg.avg) * (d.v - agg.avg)) / (agg.cnt - 1)) END AS sd
	FROM d JOIN agg ON agg.key = d.key GROUP BY d.key, agg.cnt
)
SELECT ROUND(100.0 * agg.total / (SELECT SUM(total) FROM agg), 1) AS "Time (%)", agg.total AS "Total Time (ns)",
	agg.cnt AS "Num Calls", agg.avg AS "Avg (ns)", med.med AS "Med (ns)", agg.mn AS "Min (ns)", agg.mx AS "Max (ns)",
	sd.sd AS "StdDev (ns)", s.value AS "Name"
FROM agg JOIN med ON med.key = agg.key JOIN sd ON sd.key = agg.key JOIN StringIds AS s ON s.id = agg.key
ORDER BY agg.total DESC, s.value;

-- report: cuda_gpu_mem_time_sum
-- CUDA GPU MemOps Summary (by Time): one row per copy direction
-- ("[CUDA memcpy Host-to-Device]", ...) and one for all sets ("[CUDA memset]").
WITH d AS (
	SELECT '[CUDA memcpy ' || e.label || ']' AS key, m."end" - m."start" AS v
	FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS e ON e.id = m.copyKind
	UNION ALL
	SELECT '[CUDA memset]', "end" - "start" FROM CUPTI_ACTIVITY_KIND_MEMSET
), r AS (
	SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v) AS i, COUNT(*) OVER (PARTITION BY key) AS n FROM d
), med AS (
	SELECT key, AVG(v) AS med FROM r WHERE 2 * i IN (n, n + 1, n + 2) GROUP BY key
), agg AS (
	SELECT key, SUM(v) AS total, COUNT(*) AS cnt, AVG(v) AS avg, MIN(v) AS mn, MAX(v) AS mx FROM d GROUP BY key
), sd AS (
	SELECT d.key, CASE WHEN agg.cnt > 1 THEN SQRT(SUM((d.v - agg.avg) * (d.v - agg.avg)) / (agg.cnt - 1)) END AS sd
	FROM d JOIN agg ON agg.key = d.key GROUP BY d.key, agg.cnt
)
SELECT ROUND(100.0 * agg.total / (SELECT SUM(total) FROM agg), 1) AS "Time (%)", agg.total AS "Total Time (ns)",
	agg.cnt AS "Count", agg.avg AS "Avg (ns)", med.med AS "Med (ns)", agg.mn AS "Min (ns)", agg.mx AS "Max (ns)",
	sd.sd AS "StdDev (ns)", agg.key AS "Operation"
FROM agg JOIN med ON med.key = agg.key JOIN sd ON sd.key = agg.key
ORDER BY agg.total DESC, agg.key;

-- report: cuda_gpu_mem_size_sum
-- CUDA GPU MemOps Summary (by Size): the same operations, by bytes moved or set.
WITH d AS (
	SELECT '[CUDA memcpy ' || e.label || ']' AS key, m.bytes / 1e6 AS v
	FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS e ON e.id = m.copyKind
	UNION ALL
	SELECT '[CUDA memset]', bytes / 1e6 FROM CUPTI_ACTIVITY_KIND_MEMSET
), r AS (
	SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v) AS i, COUNT(*) OVER (PARTITION BY key) AS n FROM d
), med AS (
	SELECT key, AVG(v) AS med FROM r WHERE 2 * i IN (n, n + 1, n + 2) GROUP BY key
), agg AS (
	SELECT key, SUM(v) AS total, COUNT(*) AS cnt, AVG(v) AS avg, MIN(v) AS mn, MAX(v) AS mx FROM d GROUP BY key
), sd AS (
	SELECT d.key, CASE WHEN agg.cnt > 1 THEN SQRT(SUM((d.v - agg.avg) * (d.v - agg.avg)) / (agg.cnt - 1)) END AS sd
	FROM d JOIN agg ON agg.key = d.key GROUP BY d.key, agg.cnt
)
SELECT agg.total AS "Total (MB)", agg.cnt AS "Count", agg.avg AS "Avg (MB)", med.med AS "Med (MB)",
	agg.mn AS "Min (MB)", agg.mx AS "Max (MB)", sd.sd AS "StdDev (MB)", agg.key AS "Operation"
FROM agg JOIN med ON med.key = agg.key JOIN sd ON sd.key = agg.key
ORDER BY agg.total DESC, agg.key;

-- report: nvtx_sum
-- NVTX Range Summary: one row per range name and style (PushPop for
-- push/pop ranges, StartEnd for start/end ranges), closed ranges only; a
-- range of a named domain is named "domain:range".
WITH d AS (
	SELECT CASE WHEN n.eventType = 59 THEN 'PushPop' ELSE 'StartEnd' END AS style,
		COALESCE(dom.text || ':', '') || COALESCE(n.text, s.value, '') AS name, n."end" - n."start" AS v
	FROM NVTX_EVENTS AS n
	LEFT JOIN StringIds AS s ON s.id = n.textId
	LEFT JOIN NVTX_EVENTS AS dom ON dom.eventType = 75 AND n.domainId <> 0 AND dom.domainId = n.domainId
		AND dom.globalTid >> 24 = n.globalTid >> 24
	WHERE n.eventType IN (59, 60) AND n."end" IS NOT NULL
), k AS (
	SELECT style || '|' || name AS key, style, name, v FROM d
), r AS (
	SELECT key, v, ROW_NUMBER() OVER (PARTITION BY key ORDER BY v) AS i, COUNT(*) OVER (PARTITION BY key) AS n FROM k
), med AS (
	SELECT key, AVG(v) AS med FROM r WHERE 2 * i IN (n, n + 1, n + 2) GROUP BY key
), agg AS (
	SELECT key, MIN(style) AS style, MIN(name) AS name, SUM(v) AS total, COUNT(*) AS cnt, AVG(v) AS avg, MIN(v) AS mn,
		MAX(v) AS mx FROM k GROUP BY key
), sd AS (
	SELECT k.key, CASE WHEN agg.cnt > 1 THEN SQRT(SUM((k.v - agg.avg) * (k.v - agg.avg)) / (agg.cnt - 1)) END AS sd
	FROM k JOIN agg ON agg.key = k.key GROUP BY k.key, agg.cnt
)
SELECT ROUND(100.0 * agg.total / (SELECT SUM(total) FROM agg), 1) AS "Time (%)", agg.total AS "Total Time (ns)",
	agg.cnt AS "Instances", agg.avg AS "Avg (ns)", med.med AS "Med (ns)", agg.mn AS "Min (ns)", agg.mx AS "Max (ns)",
	sd.sd AS "StdDev (ns)", agg.style AS "Style", agg.name AS "Range"
FROM agg JOIN med ON med.key = agg.key JOIN sd ON sd.key = agg.key
ORDER BY agg.total DESC, agg.name;
