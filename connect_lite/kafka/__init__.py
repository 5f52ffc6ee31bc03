"""The Kafka layer: the only importer of confluent_kafka, plus the embedded Tansu broker."""

from connect_lite.kafka.admin import Admin, TopicDescription
from connect_lite.kafka.broker import BrokerStartError, EmbeddedBroker
from connect_lite.kafka.clients import admin_config, consumer_config, producer_config
from connect_lite.kafka.consumer import ConsumedMessage, Consumer
from connect_lite.kafka.producer import Producer

__all__ = [
    "Admin",
    "BrokerStartError",
    "ConsumedMessage",
    "Consumer",
    "EmbeddedBroker",
    "Producer",
    "TopicDescription",
    "admin_config",
    "consumer_config",
    "producer_config",
]
