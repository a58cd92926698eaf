"""The fraudstream overview dashboard (uid `fraudstream-overview`): end-to-end alert latency against the 300-500 ms
budget, whether detection keeps up, throughput, rules, DLQ and the operator.

Every query filters by the `$namespace` variable and takes rates over `$__rate_interval`; histograms are summed
`by (le)` across pods (the executors each serve their own). Red threshold lines are the PrometheusRule's alert
thresholds. `render()` is the exact text of charts/fraudstream/files/dashboard.json."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as dashboard_builders
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DataSourceRef,
    DynamicConfigValue,
    Threshold,
    ThresholdsMode,
    VariableRefresh,
    VariableSort,
)

CHART_FILE = Path(__file__).resolve().parents[2] / "charts" / "fraudstream" / "files" / "dashboard.json"
UID = "fraudstream-overview"

# Every panel and query reads the data source the user picks (any Prometheus, kube-prometheus-stack's included).
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
NAMESPACE_MATCHER = 'namespace=~"$namespace"'
RATE_INTERVAL = "$__rate_interval"

# The latency budget (CONTRACT: 300-500 ms).
BUDGET_LOW_S = 0.3
BUDGET_HIGH_S = 0.5
# The PrometheusRule's thresholds drawn as red lines (tests/unit/chart/test_dashboard.py holds them equal).
LAGGING_S = 60
SKIPPING_MOST_RATIO = 0.5

LATE = 'outcome="late"'
EVALUATED = 'outcome="evaluated"'
CACHED = 'result="cached"'
EXISTING = 'result=~"cached|loaded|resumed"'

FULL_WIDTH = 24
ROW_HEIGHT = 8


def series(metric: str, matchers: str = "") -> str:
    """`metric{matchers,namespace=~"$namespace"}`: a selector of the chosen namespaces."""
    return f"{metric}{{{matchers + ',' if matchers else ''}{NAMESPACE_MATCHER}}}"


def rate(metric: str, matchers: str = "") -> str:
    return f"rate({series(metric, matchers)}[{RATE_INTERVAL}])"


def increase(metric: str) -> str:
    return f"increase({series(metric)}[{RATE_INTERVAL}])"


def quantile(q: str, histogram: str) -> str:
    """The q-quantile of a histogram across every pod that serves it."""
    return f"histogram_quantile({q}, sum by (le) ({rate(histogram + '_bucket')}))"


@dataclass(frozen=True)
class Query:
    """One series of a panel: its legend and its PromQL."""

    legend: str
    expr: str


@dataclass(frozen=True)
class Step:
    """A threshold step: from `value` on (None: from the bottom), the color."""

    color: str
    value: float | None


def thresholds(*steps: Step) -> dashboard_builders.ThresholdsConfig:
    return (
        dashboard_builders.ThresholdsConfig()
        .mode(ThresholdsMode.ABSOLUTE)
        .steps([Threshold(color=s.color, value=s.value) for s in steps])
    )


def targets(queries: Sequence[Query]) -> list[cogbuilder.Builder[cogvariants.Dataquery]]:
    """Range queries with refIds A, B, C... in order."""
    return [
        prometheus.Dataquery()
        .ref_id(chr(ord("A") + i))
        .datasource(DATASOURCE)
        .expr(q.expr)
        .legend_format(q.legend)
        .range()
        for i, q in enumerate(queries)
    ]


def right_axis(series_name: str, unit: str) -> tuple[str, list[DynamicConfigValue]]:
    """An override: the series named `series_name` in `unit` on the right axis."""
    return series_name, [
        DynamicConfigValue(id_val="unit", value=unit),
        DynamicConfigValue(id_val="custom.axisPlacement", value="right"),
    ]


def red(*more: DynamicConfigValue) -> list[DynamicConfigValue]:
    """Override properties: a fixed red color, plus `more`."""
    return [DynamicConfigValue(id_val="color", value={"mode": "fixed", "fixedColor": "red"}), *more]


def graph(
    panel_id: int,
    title: str,
    description: str,
    unit: str,
    queries: Sequence[Query],
    *,
    width: int = FULL_WIDTH // 2,
    height: int = ROW_HEIGHT,
    steps: Sequence[Step] = (),
    bars: bool = False,
    stacked: bool = False,
    by_name: Sequence[tuple[str, list[DynamicConfigValue]]] = (),
    by_regexp: Sequence[tuple[str, list[DynamicConfigValue]]] = (),
    ratio: bool = False,
) -> timeseries.Panel:
    """A time series panel of the dashboard's one style: thin lines, a table legend with last and max, a shared
    tooltip sorted high to low. `steps` beyond the green base are drawn as threshold lines."""
    panel = (
        timeseries.Panel()
        .id(panel_id)
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .span(width)
        .height(height)
        .unit(unit)
        .draw_style(common.GraphDrawStyle.BARS if bars else common.GraphDrawStyle.LINE)
        .line_width(1)
        .fill_opacity(10)
        .show_points(common.VisibilityMode.NEVER)
        .span_nulls(True)
        .thresholds(thresholds(Step("green", None), *steps))
        .legend(
            common_builders.VizLegendOptions()
            .display_mode(common.LegendDisplayMode.TABLE)
            .placement(common.LegendPlacement.BOTTOM)
            .show_legend(True)
            .calcs(["lastNotNull", "max"])
        )
        .tooltip(
            common_builders.VizTooltipOptions().mode(common.TooltipDisplayMode.MULTI).sort(common.SortOrder.DESCENDING)
        )
        .targets(targets(queries))
    )
    if steps:
        panel = panel.thresholds_style(
            common_builders.GraphThresholdsStyleConfig().mode(common.GraphThresholdsStyleMode.LINE)
        )
    if stacked:
        panel = panel.stacking(common_builders.StackingConfig().mode(common.StackingMode.NORMAL).group("A"))
    if ratio:
        panel = panel.min(0).max(1)
    for name, properties in by_name:
        panel = panel.override_by_name(name, properties)
    for regexp, properties in by_regexp:
        panel = panel.override_by_regexp(regexp, properties)
    return panel


def latency() -> timeseries.Panel:
    return graph(
        1,
        "End-to-end alert latency (p50 / p95 / p99)",
        "Alert written to the alerts topic minus the transaction's Kafka timestamp (fraud_alert_latency_seconds). "
        "Budget: 300 ms (yellow line) to 500 ms (red line); the SLO alert fires when p99 stays above 500 ms for "
        "5 minutes.",
        "s",
        [Query(f"p{q[2:]}", quantile(q, "fraud_alert_latency_seconds")) for q in ("0.50", "0.95", "0.99")],
        width=16,
        height=9,
        steps=[Step("yellow", BUDGET_LOW_S), Step("red", BUDGET_HIGH_S)],
    )


def within_budget() -> stat.Panel:
    within = rate("fraud_alert_latency_seconds_bucket", f'le="{BUDGET_HIGH_S}"')
    share = f"sum({within}) / sum({rate('fraud_alert_latency_seconds_count')})"
    return (
        stat.Panel()
        .id(2)
        .title("Alerts within 500 ms")
        .description("Share of alerts emitted within the 500 ms budget (the SLO is 99%).")
        .datasource(DATASOURCE)
        .span(8)
        .height(9)
        .unit("percentunit")
        .thresholds(thresholds(Step("red", None), Step("yellow", 0.99), Step("green", 0.999)))
        .reduce_options(common_builders.ReduceDataOptions().calcs(["lastNotNull"]).fields("").values(False))
        .color_mode(common.BigValueColorMode.BACKGROUND)
        .graph_mode(common.BigValueGraphMode.AREA)
        .text_mode(common.BigValueTextMode.AUTO)
        .targets(targets([Query("within 500 ms", share)]))
    )


def panels() -> list[timeseries.Panel | stat.Panel]:
    """Every panel, in reading order (the SDK lays them out left to right, top to bottom)."""
    return [
        latency(),
        within_budget(),
        graph(
            10,
            "Input lag and pending transactions",
            "How far behind its input the detector is: now minus the Kafka timestamp of the newest transaction "
            "evaluated (it also grows while the topic is idle), and transactions on the topic not yet evaluated "
            "(right axis). FraudDetectorLagging fires when the lag stays above 60 s (red line) while transactions "
            "wait, for 5 minutes.",
            "s",
            [
                Query("lag", f"max({series('fraud_input_lag_seconds')})"),
                Query("pending", f"max({series('fraud_input_pending_records')})"),
            ],
            steps=[Step("red", LAGGING_S)],
            by_name=[right_axis("pending", "short")],
        ),
        graph(
            11,
            "Streaming query: running and restarts",
            "Detector queries running (0: no transaction is evaluated; FraudDetectorQueryDown after 2 minutes), and "
            "query failures restarted from the checkpoint (FraudDetectorQueryRestarting at 3 within 15 minutes), "
            "in red.",
            "short",
            [
                Query("queries running", f"sum({series('fraud_query_up')})"),
                Query("restarts", f"sum({increase('fraud_query_restarts_total')})"),
            ],
            by_name=[("restarts", red(DynamicConfigValue(id_val="custom.drawStyle", value="bars")))],
        ),
        graph(
            3,
            "Alerts per second by rule",
            "fraud_alerts_total by rule_id (namespace/name of the FraudRule).",
            "ops",
            [Query("{{rule_id}}", f"sum by (rule_id) ({rate('fraud_alerts_total')})")],
            stacked=True,
        ),
        graph(
            4,
            "Input and processing rate",
            "Kafka records read per second (transactions and rule messages); transactions evaluated, invalid "
            "or late; and the transactions each bucket received (with routing, those with a group it owns or that "
            "it reports: a bucket far above the others is a hot key).",
            "ops",
            [
                Query("input records/s", f"sum({rate('fraud_input_rows_total')})"),
                Query("{{outcome}}", f"sum by (outcome) ({rate('fraud_transactions_total')})"),
                Query("bucket {{bucket}}", f"sum by (bucket) ({rate('fraud_bucket_transactions_total')})"),
            ],
        ),
        graph(
            12,
            "Rule skips by rule and reason",
            "Transactions a rule applied to but skipped, by rule_id and reason: missing (its aggregateFieldName is "
            "absent), non-numeric or out-of-range. That rule raises no alert for them; every other rule still "
            "evaluates them.",
            "ops",
            [Query("{{rule_id}} {{reason}}", f"sum by (rule_id, reason) ({rate('fraud_rule_skipped_total')})")],
        ),
        graph(
            13,
            "Rule skip ratio (skipped / applied)",
            "Share of the transactions each rule applied to that it skipped (rules with skips only). "
            "FraudRuleSkippingMost fires above 50% (red line) over 10 minutes, with at least 10 skipped, for "
            "5 minutes.",
            "percentunit",
            [
                Query(
                    "{{rule_id}}",
                    f"sum by (rule_id) ({rate('fraud_rule_skipped_total')}) / "
                    f"sum by (rule_id) ({rate('fraud_rule_applied_total')})",
                )
            ],
            steps=[Step("red", SKIPPING_MOST_RATIO)],
            ratio=True,
        ),
        graph(
            5,
            "Micro-batch duration",
            "Trigger execution time of the detector's micro-batches (p50, p99), and each phase of the last batch.",
            "s",
            [
                Query("p50", quantile("0.50", "fraud_batch_duration_seconds")),
                Query("p99", quantile("0.99", "fraud_batch_duration_seconds")),
                Query("phase {{phase}}", f"max by (phase) ({series('fraud_batch_phase_seconds')})"),
            ],
        ),
        graph(
            6,
            "Active rules",
            "ACTIVE rules in the detector's rule set, and FraudRules the operator manages (all states).",
            "short",
            [
                Query("active in the detector", f"max({series('fraud_active_rules')})"),
                Query("managed by the operator", f"sum({series('fraudstream_operator_rules_managed')})"),
            ],
        ),
        graph(
            7,
            "DLQ and late transactions",
            "Records sent to the dead-letter topic by error, and transactions older than their key group's horizon "
            "(late). unwritable counts outputs (alerts or dead letters) Kafka refused for good; "
            "FraudOutputUnwritable fires on any.",
            "ops",
            [
                Query("DLQ {{error}}", f"sum by (error) ({rate('fraud_dlq_records_total')})"),
                Query("late", f"sum({rate('fraud_transactions_total', LATE)})"),
            ],
        ),
        graph(
            8,
            "State size",
            "Rows and memory of the detector's state store (rule windows of every key), as of the last micro-batch. "
            "Rows only when Spark counts them: spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows=true in "
            "detector.sparkConf (off by default: counting costs a read per write).",
            "short",
            [
                Query("rows", f"sum({series('fraud_state_rows')})"),
                Query("memory", f"sum({series('fraud_state_memory_used_bytes')})"),
            ],
            by_name=[right_axis("memory", "bytes")],
        ),
        graph(
            16,
            "Window cache",
            "The evaluator's cache of decoded group windows: its estimated heap and its budget (all buckets), and "
            "the share of reads of existing groups it served (right axis); the rest were read back from the state "
            "store (from their snapshots, or every event). A share falling while the bytes sit at the budget means "
            "the working set outgrew the cache: raise the chart's detector.stateCacheMb or the heap.",
            "bytes",
            [
                Query("cached", f"sum({series('fraud_window_cache_bytes')})"),
                Query("budget", f"sum({series('fraud_window_cache_budget_bytes')})"),
                Query(
                    "hit ratio",
                    f"sum({rate('fraud_window_cache_reads_total', CACHED)}) / "
                    f"sum({rate('fraud_window_cache_reads_total', EXISTING)})",
                ),
            ],
            by_name=[right_axis("hit ratio", "percentunit")],
        ),
        graph(
            17,
            "Cache admission",
            "Key groups (rule grouping keys) whose new groups each bucket's cache drops after their call instead of "
            "keeping them, because fewer than 1 in 64 of the key group's reads found an existing group (a pair of "
            "two large id spaces, say); such a group is read back from the state store if it recurs. Decided again "
            "every 8 192 reads of the key group, and each change is logged. Not an error: it keeps groups seen once "
            "from churning the cache.",
            "short",
            [Query("bucket {{bucket}}", f"sum by (bucket) ({series('fraud_window_cache_dropping_key_groups')})")],
        ),
        graph(
            14,
            "Rejected rule messages",
            "Rules-topic records the detector could not apply, by reason (unparseable, invalid, key-mismatch, "
            "unsupported-version), within each point's window; the detector's log names each key. Any fires "
            "FraudRuleMessagesRejected.",
            "short",
            [Query("{{reason}}", f"sum by (reason) ({increase('fraud_rule_messages_rejected_total')})")],
            bars=True,
        ),
        graph(
            15,
            "Out-of-order transactions",
            "Transactions evaluated after a later-ingested transaction of their key group (order across partitions "
            "mattered), per second and as a share of those evaluated (right axis). detector.reorderWaitMs lets the "
            "jvm evaluator wait for the other partitions, at that cost in latency.",
            "ops",
            [
                Query("out of order/s", f"sum({rate('fraud_out_of_order_total')})"),
                Query(
                    "share of evaluated",
                    f"sum({rate('fraud_out_of_order_total')}) / sum({rate('fraud_transactions_total', EVALUATED)})",
                ),
            ],
            by_name=[right_axis("share of evaluated", "percentunit")],
        ),
        graph(
            9,
            "Operator publishes by result",
            "Records the operator sends to the rules topic, by kind (rule, tombstone) and result; failed is in red.",
            "ops",
            [Query("{{kind}} {{result}}", f"sum by (kind, result) ({rate('fraudstream_operator_publishes_total')})")],
            width=FULL_WIDTH,
            by_regexp=[(".* failed", red())],
        ),
    ]


def overview() -> dashboard_builders.Dashboard:
    """The whole dashboard: a data source picker, a namespace picker (All by default) and every panel."""
    namespace_query = "label_values(fraud_active_rules, namespace)"
    board = (
        dashboard_builders.Dashboard("fraudstream")
        .uid(UID)
        .description(
            "End-to-end alert latency against the 300-500 ms budget, whether detection keeps up (lag, query, rule "
            "skips, rejected rule messages), throughput, rules, DLQ and the operator."
        )
        .tags(["fraudstream"])
        .editable()
        .tooltip(DashboardCursorSync.CROSSHAIR)
        .refresh("10s")
        .time("now-30m", "now")
        .timezone("utc")
        .with_variable(dashboard_builders.DatasourceVariable("datasource").label("Data source").type("prometheus"))
        .with_variable(
            dashboard_builders.QueryVariable("namespace")
            .label("Namespace")
            .datasource(DATASOURCE)
            .query({"query": namespace_query, "refId": "namespace"})
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(VariableSort.ALPHABETICAL_ASC)
            .include_all(True)
            .all_value(".*")
            .multi(True)
        )
    )
    for panel in panels():
        board = board.with_panel(panel)
    return board


def render() -> str:
    """The dashboard as Grafana's JSON model, keys sorted, two-space indents, a final newline."""
    return JSONEncoder(indent=2, sort_keys=True).encode(overview().build()) + "\n"
