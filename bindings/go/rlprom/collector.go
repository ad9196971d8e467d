// Package rlprom hands rl stores' statistics to Prometheus's client_golang:
//
//	prometheus.MustRegister(rlprom.NewCollector(store))
//	prometheus.MustRegister(rlprom.NewCollectorOf(map[string]*rl.Store{"main": main, "edge": edge}, "store"))
//
// The metrics are librl's own exposition (Store.Metrics: decisions by
// verdict and source, failures by status, the circuit breakers, the
// round-trip summary), parsed by Prometheus's own text parser and handed on
// as constant metrics, so they carry the same names, help and labels in
// every binding. It is a module of its own so that the rl binding does not
// depend on client_golang.
package rlprom

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	rl "github.com/rl-dev/rl/bindings/go"
)

// Collector is a prometheus.Collector of one or several stores. It is
// unchecked (its Describe sends nothing): the families depend on the store
// (Cluster nodes, Redis round trips) and are read at each scrape.
type Collector struct {
	stores []namedStore
	label  string
}

type namedStore struct {
	name  string
	store *rl.Store
}

// NewCollector collects one store's statistics.
func NewCollector(store *rl.Store) *Collector {
	return &Collector{stores: []namedStore{{store: store}}}
}

// NewCollectorOf collects several stores' statistics, each sample labelled
// `label` (e.g. "store") with its store's name: a registry takes each
// metric name once, so several stores go through one collector.
func NewCollectorOf(stores map[string]*rl.Store, label string) (*Collector, error) {
	if len(stores) == 0 || !model.LabelName(label).IsValidLegacy() {
		return nil, fmt.Errorf("rlprom: NewCollectorOf needs at least one store and a valid label name (got %q)", label)
	}
	c := &Collector{label: label}
	for name, s := range stores {
		if s == nil {
			return nil, fmt.Errorf("rlprom: store %q is nil", name)
		}
		c.stores = append(c.stores, namedStore{name, s})
	}
	sort.Slice(c.stores, func(i, j int) bool { return c.stores[i].name < c.stores[j].name })
	return c, nil
}

// Describe sends nothing: an unchecked collector.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect parses each store's exposition and sends its samples.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stores {
		parser := expfmt.NewTextParser(model.LegacyValidation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(s.store.Metrics()))
		if err != nil {
			ch <- prometheus.NewInvalidMetric(prometheus.NewDesc("rl_metrics_error", "librl's exposition did not parse", nil, nil), err)
			continue
		}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				ch <- c.constMetric(f, m, s.name)
			}
		}
	}
}

func (c *Collector) constMetric(f *dto.MetricFamily, m *dto.Metric, store string) prometheus.Metric {
	var names, values []string
	for _, l := range m.GetLabel() {
		names = append(names, l.GetName())
		values = append(values, l.GetValue())
	}
	if c.label != "" {
		names = append(names, c.label)
		values = append(values, store)
	}
	desc := prometheus.NewDesc(f.GetName(), f.GetHelp(), names, nil)
	var metric prometheus.Metric
	var err error
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		metric, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.GetCounter().GetValue(), values...)
	case dto.MetricType_GAUGE:
		metric, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue(), values...)
	case dto.MetricType_SUMMARY:
		quantiles := map[float64]float64{}
		for _, q := range m.GetSummary().GetQuantile() {
			quantiles[q.GetQuantile()] = q.GetValue()
		}
		metric, err = prometheus.NewConstSummary(desc, m.GetSummary().GetSampleCount(), m.GetSummary().GetSampleSum(), quantiles, values...)
	default:
		metric, err = prometheus.NewConstMetric(desc, prometheus.UntypedValue, m.GetUntyped().GetValue(), values...)
	}
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return metric
}
