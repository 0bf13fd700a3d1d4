// The ns-3 side of the ackclock-sim against ns-3 benchmark (bench/ns3/README.md).
//
// A dumbbell of N sender/receiver pairs: left_i --access-- gw_left --bottleneck-- gw_right
// --access-- right_i, point-to-point links, one BulkSendApplication per left host started
// at t = 0 sending to a PacketSink on its right partner, TcpNewReno configured like
// ackclock's `newreno` preset (crates/tcp/src/config.rs). The traffic-control layer is
// removed from every device, so each link direction is one drop-tail FIFO in packets (the
// PointToPointNetDevice's own DropTailQueue), as ackclock's `drop_tail` qdisc is.
//
// Prints one line of key=value results (bytes delivered, bottleneck counters, wall time of
// Simulator::Run alone) for bench/ns3/run.sh to parse.
//
// Build: g++ -O2 -std=c++17 dumbbell.cc -o dumbbell -lns3-applications -lns3-point-to-point
//        -lns3-traffic-control -lns3-internet -lns3-network -lns3-core
//        (Debian's ns3-*.pc files name libgsl.so, which only libgsl-dev provides.)
// Run:   ./dumbbell --pairs=8 --accessRate=100Mbps --accessDelay=1ms
//        --bottleneckRate=1.5Mbps --bottleneckDelay=25ms --queuePkts=16 --duration=100

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

namespace
{
// Packets the traffic-control layer of gw_left dropped: with no queue disc, a device queue
// that is full stops the device's transmit queue (flow control) and the next packet is
// dropped there, not refused by the DropTailQueue itself.
uint64_t g_tcDrops = 0;

void
CountTcDrop(Ptr<const Packet>)
{
    ++g_tcDrops;
}
} // namespace

int
main(int argc, char* argv[])
{
    uint32_t pairs = 8;
    std::string accessRate = "100Mbps";
    std::string accessDelay = "1ms";
    uint32_t accessQueuePkts = 1000;
    std::string bottleneckRate = "1.5Mbps";
    std::string bottleneckDelay = "25ms";
    uint32_t queuePkts = 16;
    double duration = 100.0;
    uint32_t mss = 1460;
    // ackclock's newreno preset has 128 KiB buffers. The send buffer is 64 KiB here (and in
    // a.toml, b.toml) because Debian's ns-3.37 crashes with larger ones once the bottleneck
    // is fast enough for a flow to fill the 65535-byte window (a null TcpTxItem reaches
    // TcpRateLinux::SkbSent from TcpSocketBase::SendDataPacket; seen with send buffers of
    // 80000 bytes and more at 20 Mb/s and more). Without window scaling 64 KiB already
    // holds a full window.
    uint32_t sndBufBytes = 64 * 1024;
    uint32_t rcvBufBytes = 128 * 1024;

    CommandLine cmd(__FILE__);
    cmd.AddValue("pairs", "sender/receiver pairs (one bulk flow each)", pairs);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("accessDelay", "access link one-way delay", accessDelay);
    cmd.AddValue("accessQueuePkts", "drop-tail limit of access links, packets", accessQueuePkts);
    cmd.AddValue("bottleneckRate", "bottleneck link rate", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way delay", bottleneckDelay);
    cmd.AddValue("queuePkts", "drop-tail limit of the bottleneck, packets", queuePkts);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("mss", "TCP segment payload bytes (no options are in use)", mss);
    cmd.AddValue("sndBufBytes", "send socket buffer, bytes", sndBufBytes);
    cmd.AddValue("rcvBufBytes", "receive socket buffer, bytes", rcvBufBytes);
    cmd.Parse(argc, argv);

    // TCP: ackclock's newreno preset.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(0xffffffff));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBufBytes));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(false)); // Nagle on
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1))); // SYN RTO
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer left;
    left.Create(pairs);
    NodeContainer right;
    right.Create(pairs);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, accessQueuePkts)));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(bottleneckDelay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePkts)));

    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(left);
    stack.Install(right);

    NetDeviceContainer all;
    NetDeviceContainer bn = bottleneck.Install(routers.Get(0), routers.Get(1));
    all.Add(bn);
    Ipv4AddressHelper addr;
    addr.SetBase("10.255.0.0", "255.255.255.252");
    addr.Assign(bn);
    std::vector<Ipv4Address> rightAddr;
    for (uint32_t i = 0; i < pairs; ++i)
    {
        NetDeviceContainer l = access.Install(left.Get(i), routers.Get(0));
        NetDeviceContainer r = access.Install(routers.Get(1), right.Get(i));
        all.Add(l);
        all.Add(r);
        // One /24 per access link: 10.(k mod 250).(k div 250).0 with k = 2i and 2i + 1.
        char base[32];
        std::snprintf(base, sizeof base, "10.%u.%u.0", (2 * i) % 250, (2 * i) / 250);
        addr.SetBase(base, "255.255.255.0");
        addr.Assign(l);
        std::snprintf(base, sizeof base, "10.%u.%u.0", (2 * i + 1) % 250, (2 * i + 1) / 250);
        addr.SetBase(base, "255.255.255.0");
        Ipv4InterfaceContainer ri = addr.Assign(r);
        rightAddr.push_back(ri.GetAddress(1));
    }
    // Ipv4AddressHelper::Assign installs the default queue disc (FqCoDel) on every device;
    // take the traffic-control layer's queues away so each device's DropTailQueue is the
    // only queue, as in ackclock.
    TrafficControlHelper tch;
    tch.Uninstall(all);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    // gw_left's other devices are the access links toward the senders (ACKs only, at
    // 100 Mb/s or more with a 1000-packet queue), which never fill: every drop on gw_left
    // is a drop at the bottleneck.
    if (!routers.Get(0)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeCallback(&CountTcDrop)))
    {
        NS_FATAL_ERROR("no TcDrop trace source on ns3::TrafficControlLayer");
    }

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < pairs; ++i)
    {
        uint16_t port = 5001 + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sink.Install(right.Get(i));
        s.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rightAddr[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0)); // unlimited
        // ns-3's Send() takes all or nothing, so write one segment at a time to keep the
        // send buffer full (ackclock's bulk sender writes 64 KiB chunks, taken in part).
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer b = bulk.Install(left.Get(i));
        b.Start(Seconds(0));
    }

    Simulator::Stop(Seconds(duration));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double runWall = std::chrono::duration<double>(t1 - t0).count();

    uint64_t delivered = 0;
    for (auto& s : sinks)
    {
        delivered += s->GetTotalRx();
    }
    // The data direction of the bottleneck: gw_left's device. The device queue counts
    // packets it accepted and refused; what it accepted and no longer holds was sent (the
    // packet being serialized has already left the queue).
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(bn.Get(0));
    Ptr<Queue<Packet>> q = dev->GetQueue();
    uint64_t accepted = q->GetTotalReceivedPackets();
    uint64_t dropped = q->GetTotalDroppedPackets() + g_tcDrops;
    uint64_t held = q->GetNPackets();
    uint64_t sent = accepted - held;
    Simulator::Destroy();

    std::printf("ns3 pairs=%u duration_s=%g bytes_delivered=%llu goodput_bps=%.1f "
                "bottleneck_tx_pkts=%llu bottleneck_drops=%llu bottleneck_queued_at_end=%llu "
                "run_wall_s=%.6f\n",
                pairs,
                duration,
                (unsigned long long)delivered,
                delivered * 8.0 / duration,
                (unsigned long long)sent,
                (unsigned long long)dropped,
                (unsigned long long)held,
                runWall);
    return 0;
}
