"""The store's statistics for prometheus_client.

    from prometheus_client import REGISTRY
    from rl.prometheus import StoreCollector
    REGISTRY.register(StoreCollector(store))
    # several stores in one registry: one collector, a label tells them apart
    REGISTRY.register(StoreCollector({"main": main_store, "edge": edge_store}))

The metrics are librl's own exposition (``Store.metrics()``: decisions by
verdict and source, failures by status, the circuit breakers, the round-trip
summary), parsed by prometheus_client and handed to its registry as they
are, so every binding's metrics have the same names, help and labels.
prometheus_client is not a dependency of rl: ``pip install prometheus-client``.
"""

from __future__ import annotations

from typing import Dict, Iterator, Mapping, Union

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from .store import Store


class StoreCollector:
    """A prometheus_client collector of one store's statistics, or of several
    stores' with a label (``label``, default ``store``) naming each."""

    def __init__(self, stores: Union[Store, Mapping[str, Store]], label: str = "store"):
        if isinstance(stores, Store):
            self._stores: Dict[str, Store] = {"": stores}
        else:
            self._stores = dict(stores)
            if not self._stores or not all(isinstance(s, Store) for s in self._stores.values()):
                raise TypeError("StoreCollector: stores must be a Store or a non-empty mapping "
                                "of names to Stores")
        self._label = label

    def collect(self) -> Iterator[Metric]:
        if "" in self._stores:
            yield from text_string_to_metric_families(self._stores[""].metrics())
            return
        # One family per metric name across the stores (the registry wants
        # each name once), each sample labelled with its store's name.
        families: Dict[str, Metric] = {}
        for name, store in self._stores.items():
            for family in text_string_to_metric_families(store.metrics()):
                merged = families.setdefault(
                    family.name, Metric(family.name, family.documentation, family.type))
                for sample in family.samples:
                    merged.add_sample(sample.name, {**sample.labels, self._label: name},
                                      sample.value)
        yield from families.values()
